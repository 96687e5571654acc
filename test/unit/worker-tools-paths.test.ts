import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { confinePath } from '../../server/src/agent/worker-tools/confine-path.ts';
import {
  FILE_AND_SHELL_TOOLS,
  type WorkerToolContext,
} from '../../server/src/agent/worker-tools/index.ts';
import { workerEnv } from '../../server/src/sandbox/worker-env.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';

let world: TempEnv;
let root: string;
let outside: string;
let context: WorkerToolContext;
beforeEach(() => {
  world = createTempEnv();
  root = world.project;
  outside = world.home;
  writeFileSync(join(outside, 'secret.txt'), 'the secret\n');
  context = { root, env: {} };
});
afterEach(() => world.cleanup());

const call = (name: string, input: unknown) => {
  const tool = FILE_AND_SHELL_TOOLS.find((candidate) => candidate.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  return tool.run(input, context);
};
const write = (path: string, content: string | Buffer) => {
  mkdirSync(join(root, path, '..'), { recursive: true });
  writeFileSync(join(root, path), content);
};

describe('path confinement', () => {
  it('refuses git metadata at any depth, in any case, as named or through a link', async () => {
    write('.git/config', '[core]\n');
    write('sub/.git', 'gitdir: /elsewhere\n');
    symlinkSync('.git', join(root, 'link-to-git'));
    symlinkSync(join(root, '.git', 'config'), join(root, 'link-to-config'));
    const attempts: [string, Record<string, unknown>][] = [
      ['write_file', { path: '.git', content: 'gitdir: /tmp/evil\n' }],
      ['write_file', { path: '.git/config', content: '[core]\n\tfsmonitor = x\n' }],
      ['write_file', { path: './a/../.git/hooks/pre-commit', content: 'x' }],
      ['write_file', { path: 'sub/.git', content: 'gitdir: /tmp/evil\n' }],
      ['write_file', { path: 'new/deep/.git/config', content: 'x' }],
      ['write_file', { path: 'new/.GIT/config', content: 'x' }],
      ['write_file', { path: 'link-to-git/config', content: 'x' }],
      ['write_file', { path: 'link-to-config', content: 'x' }],
      ['edit_file', { path: '.git/config', old_text: '[core]', new_text: '[core]\n\teditor = x' }],
      ['edit_file', { path: 'link-to-config', old_text: '[core]', new_text: 'x' }],
      ['read_file', { path: '.git/config' }],
      ['grep', { pattern: 'core', path: '.git' }],
    ];
    for (const [name, input] of attempts) {
      const result = await call(name, input);
      expect(result.isError, `${name} ${JSON.stringify(input)}`).toBe(true);
      expect(result.content).toContain('is git metadata (.git)');
    }
    expect(readFileSync(join(root, '.git', 'config'), 'utf8')).toBe('[core]\n');
    expect(readFileSync(join(root, 'sub', '.git'), 'utf8')).toBe('gitdir: /elsewhere\n');
    expect(existsSync(join(root, 'new'))).toBe(false);
    // Names that only look like it are ordinary files.
    for (const path of ['.gitignore', '.github/workflows/ci.yml', 'docs/.git-notes', 'x.git']) {
      expect((await call('write_file', { path, content: 'x' })).isError, path).toBeFalsy();
    }
  });

  it('refuses .. and absolute paths outside the root, naming the path and the root', async () => {
    for (const path of ['../x', '/etc/passwd', 'a/../../x']) {
      const result = await call('read_file', { path });
      expect(result.isError).toBe(true);
      expect(result.content).toContain(`"${path}"`);
      expect(result.content).toContain(`outside the task directory ${root}`);
    }
    const written = await call('write_file', { path: '../escaped.txt', content: 'x' });
    expect(written.isError).toBe(true);
    expect(existsSync(join(root, '..', 'escaped.txt'))).toBe(false);
  });

  it('refuses symbolic links that lead outside, for files and directories, reading and writing', async () => {
    symlinkSync('/tmp', join(root, 'tmp-link'));
    symlinkSync(join(outside, 'secret.txt'), join(root, 'secret-link'));
    symlinkSync(outside, join(root, 'out'));
    const attempts: [string, Record<string, unknown>][] = [
      ['read_file', { path: 'tmp-link' }],
      ['read_file', { path: 'secret-link' }],
      ['edit_file', { path: 'secret-link', old_text: 'the', new_text: 'a' }],
      ['read_file', { path: 'out/secret.txt' }],
      ['grep', { pattern: 'secret', path: 'out' }],
      ['write_file', { path: 'out/new.txt', content: 'x' }],
      ['write_file', { path: 'out/deeper/new.txt', content: 'x' }],
      ['write_file', { path: 'tmp-link/delegate-escape.txt', content: 'x' }],
    ];
    for (const [name, input] of attempts) {
      const result = await call(name, input);
      expect(result.isError, `${name} ${JSON.stringify(input)}`).toBe(true);
      expect(result.content).toContain('leads through a symbolic link to');
      expect(result.content).toContain(root);
    }
    expect(existsSync(join(outside, 'new.txt'))).toBe(false);
    expect(existsSync(join(outside, 'deeper'))).toBe(false);
    expect(existsSync('/tmp/delegate-escape.txt')).toBe(false);
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('the secret\n');
  });

  it('refuses to write through a dangling symbolic link', async () => {
    symlinkSync(join(outside, 'not-yet.txt'), join(root, 'dangling'));
    const result = await call('write_file', { path: 'dangling', content: 'x' });
    expect(result.isError).toBe(true);
    expect(result.content).toContain('symbolic link whose target does not exist');
    expect(existsSync(join(outside, 'not-yet.txt'))).toBe(false);
  });

  it('allows absolute paths inside the root and links that stay inside', async () => {
    write('src/real.txt', 'one\n');
    symlinkSync('real.txt', join(root, 'src', 'alias.txt'));
    const read = await call('read_file', { path: join(root, 'src', 'real.txt') });
    expect(read.content).toBe('src/real.txt: lines 1–1 of 1\n     1\tone');
    const written = await call('write_file', { path: 'src/alias.txt', content: 'two\n' });
    expect(written.isError).toBeUndefined();
    expect(written.filesWritten).toEqual(['src/real.txt']);
    expect(readFileSync(join(root, 'src', 'real.txt'), 'utf8')).toBe('two\n');
    const confined = await confinePath(root, 'src/../src/new/file.txt');
    expect(confined).toMatchObject({ display: 'src/new/file.txt', exists: false });
  });
});

describe('read_file', () => {
  it('numbers lines like cat -n under a header, from offset for limit lines', async () => {
    write('a.txt', 'alpha\nbeta\ngamma\n');
    expect((await call('read_file', { path: 'a.txt' })).content).toBe(
      'a.txt: lines 1–3 of 3\n     1\talpha\n     2\tbeta\n     3\tgamma',
    );
    expect((await call('read_file', { path: 'a.txt', offset: 2, limit: '1' })).content).toBe(
      'a.txt: lines 2–2 of 3\n     2\tbeta',
    );
    const past = await call('read_file', { path: 'a.txt', offset: 9 });
    expect(past).toMatchObject({ isError: true });
    expect(past.content).toContain('offset 9 is past the end of a.txt, which has 3 lines');
  });

  it('says when a file is empty, and refuses directories, binaries and bad input', async () => {
    write('empty.txt', '');
    write('dir/x.txt', 'x');
    write('image.png', Buffer.from([0x89, 0x50, 0, 1, 2]));
    expect((await call('read_file', { path: 'empty.txt' })).content).toBe(
      'empty.txt: empty file (0 lines)',
    );
    const cases: [unknown, string][] = [
      [{ path: 'dir' }, 'dir is a directory'],
      [{ path: 'image.png' }, 'image.png looks binary'],
      [{ path: 'missing.txt' }, 'missing.txt does not exist'],
      [{}, '"path" is required'],
      [{ path: 'empty.txt', offset: 0 }, '"offset" must be an integer of at least 1'],
      ['a string', 'expects a JSON object'],
    ];
    for (const [input, message] of cases) {
      const result = await call('read_file', input);
      expect(result.isError).toBe(true);
      expect(result.content).toContain(message);
    }
  });

  it('cuts a slice past about 60 KB loudly, saying where to read on', async () => {
    write(
      'big.txt',
      Array.from({ length: 3_000 }, (_, index) => `${index} ${'x'.repeat(60)}`).join('\n'),
    );
    const { content } = await call('read_file', { path: 'big.txt' });
    expect(content.length).toBeLessThan(62 * 1024);
    expect(content).toMatch(/^big\.txt: lines 1–(\d+) of 3000\n/);
    const last = Number(/lines 1–(\d+)/.exec(content)?.[1]);
    expect(content).toContain(
      `[… output cut at 60 KB after line ${last}; read on with offset ${last + 1} …]`,
    );
  });
});

describe('write_file and edit_file', () => {
  it('creates parent folders and reports bytes, lines and the file written', async () => {
    const result = await call('write_file', { path: 'deep/er/new.ts', content: 'a\nb\n' });
    expect(result).toEqual({
      content: 'Created deep/er/new.ts: 4 bytes, 2 lines.',
      filesWritten: ['deep/er/new.ts'],
    });
    expect(readFileSync(join(root, 'deep/er/new.ts'), 'utf8')).toBe('a\nb\n');
    const again = await call('write_file', { path: 'deep/er/new.ts', content: '' });
    expect(again.content).toBe('Overwrote deep/er/new.ts: 0 bytes, 0 lines.');
  });

  it('replaces exactly one occurrence, literally', async () => {
    write('code.ts', 'const a = 1;\nconst b = 2;\n');
    const result = await call('edit_file', {
      path: 'code.ts',
      old_text: 'b = 2',
      new_text: "b = '$&'",
    });
    expect(result).toMatchObject({ filesWritten: ['code.ts'] });
    expect(result.content).toContain('Edited code.ts at line 2');
    expect(readFileSync(join(root, 'code.ts'), 'utf8')).toBe("const a = 1;\nconst b = '$&';\n");
  });

  it('explains a missing or repeated old_text and leaves the file alone', async () => {
    write('code.ts', 'x();\nx();\n');
    const missing = await call('edit_file', {
      path: 'code.ts',
      old_text: 'y();',
      new_text: 'z();',
    });
    expect(missing).toMatchObject({ isError: true });
    expect(missing.content).toContain('not found in code.ts; re-read the file');
    const repeated = await call('edit_file', {
      path: 'code.ts',
      old_text: 'x();',
      new_text: 'z();',
    });
    expect(repeated).toMatchObject({ isError: true });
    expect(repeated.content).toContain('found 2 times in code.ts; include more context');
    expect(readFileSync(join(root, 'code.ts'), 'utf8')).toBe('x();\nx();\n');
  });
});

describe('list_files', () => {
  it('lists matching files sorted, without .git and node_modules', async () => {
    for (const path of [
      'src/b.ts',
      'src/a.ts',
      'src/c.js',
      '.git/config',
      'node_modules/m/index.ts',
      '.github/ci.ts',
    ]) {
      write(path, 'x');
    }
    symlinkSync(outside, join(root, 'out'));
    const { content } = await call('list_files', { pattern: '**/*' });
    expect(content.split('\n')).toEqual(['.github/ci.ts', 'src/a.ts', 'src/b.ts', 'src/c.js']);
    expect((await call('list_files', { pattern: 'src/*.ts' })).content).toBe('src/a.ts\nsrc/b.ts');
    expect((await call('list_files', { pattern: 'src' })).content).toContain('try "src/**"');
    const escape = await call('list_files', { pattern: '../*' });
    expect(escape).toMatchObject({ isError: true });
  });

  it('caps the list at 500 with a note', async () => {
    for (let index = 0; index < 510; index += 1)
      write(`many/${String(index).padStart(3, '0')}.txt`, '');
    const lines = (await call('list_files', { pattern: 'many/*' })).content.split('\n');
    expect(lines).toHaveLength(501);
    expect(lines[499]).toBe('many/499.txt');
    expect(lines[500]).toContain('510 files match; only the first 500 are listed');
  });
});

describe('grep', () => {
  beforeEach(() => {
    write('src/a.ts', 'export function alphaTool() {}\nconst x = 1;\n');
    write('src/b.py', 'def alpha():\n  pass\n');
    write('node_modules/m/index.ts', 'alpha');
    write('blob.bin', Buffer.from('alpha\0beta'));
  });

  it('prints path:line:text, skipping binaries and node_modules', async () => {
    expect((await call('grep', { pattern: 'alpha' })).content).toBe(
      'src/a.ts:1:export function alphaTool() {}\nsrc/b.py:1:def alpha():',
    );
    expect((await call('grep', { pattern: 'ALPHA', glob: '*.py' })).content).toContain(
      'No matches',
    );
    expect((await call('grep', { pattern: '/ALPHA/i', glob: '*.py' })).content).toBe(
      'src/b.py:1:def alpha():',
    );
    expect((await call('grep', { pattern: 'x = \\d', path: 'src/a.ts' })).content).toBe(
      'src/a.ts:2:const x = 1;',
    );
  });

  it('explains an invalid regular expression', async () => {
    const result = await call('grep', { pattern: 'alpha(' });
    expect(result).toMatchObject({ isError: true });
    expect(result.content).toContain('not a valid JavaScript regular expression');
  });

  it('stops at 200 matches with a loud note', async () => {
    write('many.txt', 'hit\n'.repeat(300));
    const lines = (await call('grep', { pattern: '^hit$' })).content.split('\n');
    expect(lines).toHaveLength(201);
    expect(lines[200]).toContain('stopped after 200 matches');
  });
});

describe('workerEnv', () => {
  it('keeps the allowlist and extra, drops secret-looking names, sets unattended defaults', () => {
    const env = workerEnv(
      {
        PATH: '/bin',
        HOME: '/h',
        LC_ALL: 'C',
        EDITOR: 'vim',
        OPENAI_API_KEY: 'k',
        SESSION_ID: 's',
      },
      { GIT_AUTHOR_NAME: 'Worker', GITHUB_TOKEN: 't', HTTP_AUTHORIZATION: 'a', TMPDIR: '/t' },
    );
    expect(env).toEqual({
      PATH: '/bin',
      HOME: '/h',
      LC_ALL: 'C',
      GIT_AUTHOR_NAME: 'Worker',
      TMPDIR: '/t',
      GIT_TERMINAL_PROMPT: '0',
      PAGER: 'cat',
      GIT_PAGER: 'cat',
      CI: 'true',
    });
  });
});

it('offers the six tools in order, each with an object schema', () => {
  expect(FILE_AND_SHELL_TOOLS.map((tool) => tool.name)).toEqual([
    'read_file',
    'write_file',
    'edit_file',
    'list_files',
    'grep',
    'run_bash',
  ]);
  for (const tool of FILE_AND_SHELL_TOOLS) expect(tool.inputSchema.type).toBe('object');
});
