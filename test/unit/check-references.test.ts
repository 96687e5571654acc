import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkReferences } from '../../server/src/delegation/check-references.ts';

let root: string;
beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'delegate-refs-')));
  mkdirSync(join(root, 'src'));
  writeFileSync(join(root, 'src', 'a.ts'), 'one\ntwo\nthree\n');
  writeFileSync(join(root, 'Makefile.mk'), 'all:\n');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const verdicts = async (answer: string) =>
  (await checkReferences(answer, root)).check.broken.map(
    (entry) => `${entry.reference} ${entry.why}`,
  );

describe('checkReferences: every path:line of an answer against the files', () => {
  const cases: Array<[what: string, answer: string, broken: string[], checked: number]> = [
    ['a line that exists', 'see src/a.ts:3', [], 1],
    ['a range inside the file', 'src/a.ts:1-3', [], 1],
    ['a line and a column', 'src/a.ts:2:5', [], 1],
    ['a line past the end', 'src/a.ts:4', ['src/a.ts:4 the file has 3 lines'], 1],
    ['a range past the end', 'src/a.ts:2-9', ['src/a.ts:2-9 the file has 3 lines'], 1],
    ['line 0', 'src/a.ts:0', ['src/a.ts:0 not a line number'], 1],
    ['no such file', 'src/b.ts:1', ['src/b.ts:1 no such file'], 1],
    [
      'a relative path out of the project',
      '../etc/passwd:1',
      ['../etc/passwd:1 outside the project'],
      1,
    ],
    [
      'an absolute path out of the project',
      '/etc/hostname:1',
      ['/etc/hostname:1 outside the project'],
      1,
    ],
    ['a name with an extension at the top', 'Makefile.mk:1', [], 1],
    ['a URL with a port is no reference', 'http://localhost:8080/x and https://a.b.c:443', [], 0],
    ['a time or a ratio is no reference', 'at 12:30, a 16:9 screen, v1.2:3', [], 0],
    ['a word without folder or extension is no reference', 'note:1 and step:2', [], 0],
    [
      'the same reference twice counts once',
      'src/a.ts:9 and again src/a.ts:9',
      ['src/a.ts:9 the file has 3 lines'],
      1,
    ],
  ];
  for (const [what, answer, broken, checked] of cases) {
    it(what, async () => {
      expect(await verdicts(answer)).toEqual(broken);
      expect((await checkReferences(answer, root)).check.checked).toBe(checked);
    });
  }

  it('marks each broken reference where it stands and leaves the rest of the answer alone', async () => {
    const { answer } = await checkReferences(
      'Done in src/a.ts:2; also src/a.ts:7 and src/a.ts:7.',
      root,
    );
    expect(answer).toBe(
      'Done in src/a.ts:2; also src/a.ts:7 [unverified: the file has 3 lines] and src/a.ts:7 [unverified: the file has 3 lines].',
    );
  });
});
