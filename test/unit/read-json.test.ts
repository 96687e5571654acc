import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeFileSystemError } from '../../server/src/util/file-system-error.ts';
import { parseJson, readJsonFile } from '../../server/src/util/read-json.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'delegate-read-json-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const BOM = '\uFEFF';

describe('readJsonFile: one reader, BOM accepted, problems in words', () => {
  const cases: Array<[name: string, content: string, expected: unknown]> = [
    ['an object', '{"a": 1}', { value: { a: 1 } }],
    ['an object after a byte-order mark', `${BOM}{"a": 1}`, { value: { a: 1 } }],
    ['an empty file', '', { problem: 'is empty' }],
    ['a byte-order mark alone', BOM, { problem: 'is empty' }],
    ['whitespace', ' \n\t', { problem: 'is empty' }],
    [
      'an object cut off after a comma',
      '{"a": 1,',
      { problem: expect.stringMatching(/^is not valid JSON \(cut off/) },
    ],
    [
      'an object cut off inside a string',
      '{"a": "x',
      { problem: expect.stringMatching(/^is not valid JSON \(cut off/) },
    ],
    [
      'an object cut off after a key',
      '{"a"',
      { problem: expect.stringMatching(/^is not valid JSON \(cut off/) },
    ],
    [
      'garbage',
      'garbage',
      { problem: expect.stringMatching(/^is not valid JSON \(Unexpected token/) },
    ],
    [
      'text after the JSON',
      '{"a":1} x',
      { problem: expect.stringMatching(/^is not valid JSON \(Unexpected non-whitespace/) },
    ],
  ];
  it.each(cases)('%s', (_name, content, expected) => {
    const file = join(dir, 'file.json');
    writeFileSync(file, content);
    expect(readJsonFile(file)).toMatchObject(expected as object);
  });

  it('a missing file is undefined; a directory is named as such', () => {
    expect(readJsonFile(join(dir, 'none.json'))).toBeUndefined();
    expect(readJsonFile(join(dir, 'none', 'deeper.json'))).toBeUndefined();
    mkdirSync(join(dir, 'folder.json'));
    expect(readJsonFile(join(dir, 'folder.json'))).toEqual({
      problem: 'is a directory, not a file',
    });
  });

  it('a secret file is never quoted', () => {
    const file = join(dir, 'credentials.json');
    writeFileSync(file, 'sk-secret-key garbage');
    const read = readJsonFile(file, { isSecret: true });
    expect(read).toMatchObject({ problem: 'is not valid JSON' });
  });

  it('parseJson drops a byte-order mark', () => {
    expect(parseJson(`${BOM}[1]`)).toEqual([1]);
  });
});

describe('describeFileSystemError: the path, the cause, the next step', () => {
  const failure = (code: string, path: string, syscall: string) =>
    Object.assign(new Error(`${code}: ${syscall} '${path}'`), { code, path, syscall });

  it('a read-only data home says so and how to point DELEGATE_HOME elsewhere', () => {
    const text = describeFileSystemError(failure('EROFS', join(dir, 'jobs'), 'mkdir'), dir);
    expect(text).toContain(
      `Cannot create the folder ${join(dir, 'jobs')}: the file system is read-only`,
    );
    expect(text).toContain('point DELEGATE_HOME at a writable folder');
  });

  it('a permission error in the data home is the same advice', () => {
    const text = describeFileSystemError(failure('EACCES', join(dir, 'x'), 'open'), dir);
    expect(text).toMatch(/permission denied \(EACCES\).*DELEGATE_HOME/);
  });

  it('a file where a folder should be, a full disk: named with the fix', () => {
    expect(
      describeFileSystemError(failure('ENOTDIR', join(dir, 'ledger', 'a'), 'open'), dir),
    ).toContain('a file stands where a folder is expected (ENOTDIR)');
    expect(describeFileSystemError(failure('ENOSPC', '/elsewhere/file', 'write'), dir)).toMatch(
      /^Cannot write \/elsewhere\/file: the disk is full \(ENOSPC\)\. Check that path/,
    );
  });

  it('a missing file on a writable disk, and errors that are not the file system, stay bugs', () => {
    expect(
      describeFileSystemError(failure('ENOENT', join(dir, 'gone'), 'open'), dir),
    ).toBeUndefined();
    expect(describeFileSystemError(new Error('boom'), dir)).toBeUndefined();
    expect(describeFileSystemError('text', dir)).toBeUndefined();
  });
});
