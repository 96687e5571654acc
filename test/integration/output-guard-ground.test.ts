import { execFileSync } from 'node:child_process';
import {
  chownSync,
  lstatSync,
  lutimesSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { postToolUse, preToolUse, runHook } from '../helpers/hook.ts';
import { createTempEnv, makeLog, type TempEnv } from '../helpers/temp-env.ts';

/**
 * The output guard (PostToolUse, through hooks/post-tool-use.sh as Claude Code runs it) stays on
 * its own ground: it reads only regular files, never a link where Claude Code writes its own
 * file, saves and prunes only in a real `outputs` folder of the user's, and never follows a
 * link while pruning. A FIFO or `/dev/zero` must not hold the hook: each case asserts the hook
 * returned (the helper kills it after 10 s, which shows as no exit code) and what it printed.
 */
let world: TempEnv;
let sockets: Server[];
beforeEach(() => {
  world = createTempEnv();
  sockets = [];
});
afterEach(async () => {
  for (const socket of sockets) await new Promise((resolve) => socket.close(resolve));
  world.cleanup();
});

const MARKER = 'ERROR payment gateway answered 502 for order 991';
const LOG = makeLog(100 * 1024, MARKER);
const SECRET = makeLog(100 * 1024, 'SECRET-TOKEN of the user, never to be digested');
const outputs = () => join(world.dataHome, 'outputs');
const WEEKS_AGO_S = Date.now() / 1000 - 30 * 24 * 3600;
const NOBODY = 65_534;
const isRoot = process.getuid?.() === 0;

function bash(extra: Record<string, unknown> = {}) {
  const response = { stdout: LOG, stderr: '', interrupted: false, isImage: false, ...extra };
  return runHook(
    'post-tool-use.sh',
    postToolUse('Bash', { command: 'npm run e2e' }, response, world.project),
    world.env,
  );
}

/** The digest the hook gave, after checking it returned (exit 0) with one. */
function digestOf(run: ReturnType<typeof bash>): string {
  expect(run.exitCode, run.stderr).toBe(0);
  const stdout = run.json?.hookSpecificOutput?.updatedToolOutput?.stdout;
  expect(typeof stdout, run.stdout).toBe('string');
  return stdout as string;
}

function listen(path: string): Promise<void> {
  const server = createServer();
  sockets.push(server);
  return new Promise((resolve) => server.listen(path, resolve));
}

/** What can be found where Claude Code names its saved copy of a long Bash output. */
const NOT_REGULAR: Array<[string, (path: string) => Promise<void> | void]> = [
  ['a FIFO', (path) => void execFileSync('mkfifo', [path])],
  [
    'a link to a FIFO',
    (path) => {
      execFileSync('mkfifo', [`${path}.fifo`]);
      symlinkSync(`${path}.fifo`, path);
    },
  ],
  ['a link to /dev/zero', (path) => symlinkSync('/dev/zero', path)],
  ['a socket', (path) => listen(path)],
  ['a directory', (path) => mkdirSync(path)],
  [
    'a link to a big file of the user’s',
    (path) => {
      writeFileSync(`${path}.secret`, SECRET);
      symlinkSync(`${path}.secret`, path);
    },
  ],
];

describe('persistedOutputPath: only a regular file is read, never through a link', () => {
  it.each(NOT_REGULAR)('%s: returns at once with a digest of stdout', async (_name, make) => {
    const path = join(world.root, 'tool-result.txt');
    await make(path);
    const digest = digestOf(bash({ persistedOutputPath: path }));
    expect(digest).toContain(MARKER);
    expect(digest).not.toContain('SECRET-TOKEN');
    const saved = /The full output is saved in (\S+);/.exec(digest)![1]!;
    expect(readFileSync(saved, 'utf8')).toBe(LOG);
  });

  it('/dev/zero named directly: returns at once with a digest of stdout', () => {
    expect(digestOf(bash({ persistedOutputPath: '/dev/zero' }))).toContain(MARKER);
  });

  it('a regular file there is what the digest is made from', () => {
    const path = join(world.root, 'tool-result.txt');
    writeFileSync(path, `${LOG}late line: ERROR only in the saved copy\n`);
    expect(digestOf(bash({ persistedOutputPath: path }))).toContain('ERROR only in the saved copy');
  });
});

describe('a project config that is not a regular file holds no hook', () => {
  it.each([
    ['a FIFO', (path: string) => void execFileSync('mkfifo', [path])],
    ['a link to /dev/zero', (path: string) => symlinkSync('/dev/zero', path)],
  ])('.claude/delegate.json as %s: every hook answers with the defaults', (_name, make) => {
    const config = join(world.project, '.claude', 'delegate.json');
    mkdirSync(dirname(config));
    make(config);
    expect(digestOf(bash())).toContain(MARKER);
    const big = world.writeProjectFile('big.log', LOG);
    const read = runHook(
      'pre-tool-use',
      preToolUse('Read', { file_path: big }, world.project),
      world.env,
    );
    expect(read.exitCode, read.stderr).toBe(0);
    expect(read.json?.hookSpecificOutput?.permissionDecision).toBe('deny');
    const start = runHook('session-start', JSON.stringify({ cwd: world.project }), world.env);
    expect(start.exitCode, start.stderr).toBe(0);
  });
});

/** Old outputs in `dir`: what an unguarded prune would remove. */
function oldFiles(dir: string, names: string[]): void {
  mkdirSync(dir, { recursive: true });
  for (const name of names) {
    writeFileSync(join(dir, name), 'the user’s own file\n');
    utimesSync(join(dir, name), WEEKS_AGO_S, WEEKS_AGO_S);
  }
}

describe('<data home>/outputs must be a real folder of the user’s', () => {
  const cases: Array<[string, () => void, RegExp]> = [
    [
      'a link to a folder of the user’s',
      () => {
        oldFiles(join(world.root, 'notes'), ['2024-plan.txt', 'todo.txt']);
        symlinkSync(join(world.root, 'notes'), outputs());
      },
      /outputs is a symbolic link/,
    ],
    ['a file', () => writeFileSync(outputs(), 'not a folder\n'), /outputs is not a folder/],
  ];
  if (isRoot) {
    cases.push([
      'another user’s folder',
      () => {
        oldFiles(outputs(), ['theirs.txt']);
        chownSync(outputs(), NOBODY, NOBODY);
      },
      /outputs belongs to another user \(uid 65534\)/,
    ]);
  }

  it.each(cases)('%s: nothing saved or pruned, and the digest says why', (_name, make, why) => {
    make();
    const before = snapshot();
    const digest = digestOf(bash());
    expect(digest).toMatch(why);
    expect(digest).toContain('The full output was not saved');
    expect(digest).toContain(MARKER);
    expect(snapshot()).toEqual(before);
  });
});

/** Every file under the temp root except the data home's own config, by path. */
function snapshot(): string[] {
  return readdirSync(world.root, { recursive: true, encoding: 'utf8' }).sort();
}

describe('the prune never follows a link and removes only the user’s own regular files', () => {
  it('leaves links, folders and other users’ files; removes an old output of the user’s', () => {
    oldFiles(outputs(), ['old-own.txt']);
    oldFiles(join(world.root, 'elsewhere'), ['kept.txt']);
    symlinkSync(join(world.root, 'elsewhere', 'kept.txt'), join(outputs(), 'old-link.txt'));
    lutimesSync(join(outputs(), 'old-link.txt'), WEEKS_AGO_S, WEEKS_AGO_S);
    mkdirSync(join(outputs(), 'old-dir.txt'));
    utimesSync(join(outputs(), 'old-dir.txt'), WEEKS_AGO_S, WEEKS_AGO_S);
    if (isRoot) {
      oldFiles(outputs(), ['old-theirs.txt']);
      chownSync(join(outputs(), 'old-theirs.txt'), NOBODY, NOBODY);
    }
    digestOf(bash());
    const left = readdirSync(outputs());
    expect(left).not.toContain('old-own.txt');
    expect(left).toEqual(
      expect.arrayContaining([
        'old-link.txt',
        'old-dir.txt',
        ...(isRoot ? ['old-theirs.txt'] : []),
      ]),
    );
    expect(lstatSync(join(outputs(), 'old-link.txt')).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(world.root, 'elsewhere', 'kept.txt'), 'utf8')).toBe(
      'the user’s own file\n',
    );
  });
});
