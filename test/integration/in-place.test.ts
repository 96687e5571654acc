/**
 * Tasks that work in place (`isolation: "none"`): never silently outside git, a snapshot first,
 * the files changed measured on disk, and `task_cleanup` with `discard` putting the folder back.
 */
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { CLI_BUNDLE } from '../helpers/cli-process.ts';
import { byAssistantTurn, type FakeReply } from '../helpers/fake-provider.ts';
import { BROKEN_ADD_PROJECT, git, initRepository } from '../helpers/git-project.ts';
import type { ServerHandle } from '../helpers/mcp-server.ts';
import { taskTest } from '../helpers/task-world.ts';
import type { TempEnv } from '../helpers/temp-env.ts';
import { pollTaskStatus, taskIdOf } from '../helpers/wait.ts';

/** The built `delegate` CLI in the project, as a terminal user runs it. */
function cli(
  world: TempEnv,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI_BUNDLE, ...args],
      { cwd: world.project, env: world.env, encoding: 'utf8' },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const tool = (name: string, input: Record<string, unknown>) => ({ name, input });

const it = taskTest.extend(
  'startWith',
  ({ world, provider, server }) =>
    async (steps: FakeReply[], env: Record<string, string> = {}): Promise<ServerHandle> => {
      const fake = await provider.start({ respond: byAssistantTurn(steps) });
      world.writeConfig({
        profiles: { w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm', local: true } },
      });
      return server.start({ ...world.env, ...env });
    },
);
// Each test makes the folder it needs: most are no repository.
it.override('repository', null);

/** Every entry under `dir` but `.git`: type, mode, and content or link target. */
function treeOf(dir: string, prefix = ''): Record<string, string> {
  const tree: Record<string, string> = {};
  for (const name of readdirSync(join(dir, prefix)).sort()) {
    if (name === '.git') continue;
    const path = prefix ? `${prefix}/${name}` : name;
    const stats = lstatSync(join(dir, path));
    const mode = (stats.mode & 0o7777).toString(8);
    if (stats.isSymbolicLink()) tree[path] = `link → ${readlinkSync(join(dir, path))}`;
    else if (stats.isDirectory()) {
      tree[`${path}/`] = `dir ${mode}`;
      Object.assign(tree, treeOf(dir, path));
    } else tree[path] = `file ${mode}: ${readFileSync(join(dir, path), 'utf8')}`;
  }
  return tree;
}

/** A folder with one of each kind of thing a worker may change. */
function writeFolder(world: TempEnv): void {
  const files: Record<string, string> = {
    'keep.txt': 'keep\n',
    'edit.txt': 'before\n',
    'gone.txt': 'to delete\n',
    'run.sh': 'echo hi\n',
    'link-me.txt': 'plain\n',
    'append.txt': 'one\n',
    'same.txt': 'aaaa\n',
    'old-dir/a.txt': 'a\n',
    'old-dir/sub/b.txt': 'b\n',
  };
  for (const [path, content] of Object.entries(files)) world.writeProjectFile(path, content);
  symlinkSync('keep.txt', join(world.project, 'pointer'));
}

/** The worker's changes: every class of change on disk, with the file tools and the shell. */
const EDITS: FakeReply[] = [
  {
    toolUses: [
      tool('edit_file', { path: 'edit.txt', old_text: 'before', new_text: 'after' }),
      tool('write_file', { path: 'new.txt', content: 'new\n' }),
      tool('write_file', { path: 'new-dir/c.txt', content: 'c\n' }),
      tool('run_bash', {
        command: [
          'rm gone.txt',
          'chmod 755 run.sh',
          'rm link-me.txt && ln -s keep.txt link-me.txt',
          'ln -sfn edit.txt pointer',
          'rm -r old-dir',
          'mkdir empty-dir',
          // In place, same inode: a hard link would not have kept the old content.
          "printf 'two\\n' >> append.txt",
          // Same size, and the modification time put back: only the content tells.
          "t=$(stat -c %Y same.txt); printf 'bbbb\\n' > same.txt; touch -d @$t same.txt",
        ].join(' && '),
      }),
    ],
  },
  { text: 'Changed everything.' },
];

const EXPECTED_CHANGES = [
  'A empty-dir/',
  'A new-dir/c.txt',
  'A new.txt',
  'D gone.txt',
  'D old-dir/a.txt',
  'D old-dir/sub/b.txt',
  'M append.txt',
  'M edit.txt',
  'M pointer (link → edit.txt)',
  'M run.sh (mode 644 → 755)',
  'M same.txt',
  'T link-me.txt (file → symlink)',
];

const jobFolders = (world: TempEnv) =>
  existsSync(join(world.dataHome, 'jobs')) ? readdirSync(join(world.dataHome, 'jobs')) : [];

function changesOf(world: TempEnv, id: string): string[] {
  const result = JSON.parse(readFileSync(join(world.dataHome, 'jobs', id, 'result.json'), 'utf8'));
  return (result.filesChanged as Array<{ status: string; path: string }>)
    .map((change) => `${change.status} ${change.path}`)
    .sort();
}

async function runInPlace(handle: ServerHandle, args: Record<string, unknown> = {}) {
  const started = await handle.callText('task_start', {
    task: 'Change things',
    isolation: 'none',
    ...args,
  });
  expect(started.isError, started.text).toBe(false);
  const id = taskIdOf(started.text);
  await pollTaskStatus(handle, id, /done|failed|lost|timeout/);
  // The result is measured once: after this, result.json is there.
  const result = await handle.callText('task_result', { task_id: id });
  return { id, started: started.text, result: result.text };
}

describe('outside a git repository', () => {
  it.for([
    [{}, 'the task would edit your files in place'],
    [{ isolation: 'worktree' }, 'no worktree can be made'],
  ] as const)(
    'a start without isolation "none" is refused in one line that says what to do: %j',
    async ([args, why], { startWith, world }) => {
      writeFolder(world);
      const before = treeOf(world.project);
      const handle = await startWith([{ text: 'never' }]);
      const refused = await handle.callText('task_start', { task: 'Change things', ...args });
      expect(refused.isError).toBe(true);
      expect(refused.text.split('\n')).toHaveLength(1);
      expect(refused.text).toContain(`${world.project} is not in a git repository, so ${why}`);
      expect(refused.text).toContain('git init');
      expect(refused.text).toContain('isolation: "none"');
      expect(refused.text).not.toContain('internal error');
      expect(jobFolders(world)).toEqual([]);
      expect(treeOf(world.project)).toEqual(before);
    },
  );

  it('in place, every kind of change is listed from the disk, and discard puts the folder back', async ({
    startWith,
    world,
  }) => {
    writeFolder(world);
    const before = treeOf(world.project);
    const handle = await startWith(EDITS);
    const { id, started, result } = await runInPlace(handle);
    expect(started).toMatch(
      /in place in .*, which it edits directly; snapshot taken first \(12 files and folders/,
    );
    expect(changesOf(world, id)).toEqual(EXPECTED_CHANGES);
    expect(result).toContain(`in place: changes measured on disk in ${world.project}`);
    expect(result).toContain(`to undo: task_cleanup ${id} with discard: true`);

    const cleaned = await handle.callText('task_cleanup', { task_id: id, discard: true });
    expect(cleaned.isError, cleaned.text).toBe(false);
    expect(cleaned.text).toContain(`${id}: cleaned up; ${world.project} put back as it was`);
    expect(treeOf(world.project)).toEqual(before);
    expect(existsSync(join(world.dataHome, 'jobs', id))).toBe(false);
  });

  it('discard refuses paths changed again since the task ended, touching nothing; force puts them back (tool and CLI)', async ({
    startWith,
    world,
  }) => {
    writeFolder(world);
    const before = treeOf(world.project);
    const handle = await startWith(EDITS);
    const { id } = await runInPlace(handle);
    // The user goes on working after the task ended.
    writeFileSync(join(world.project, 'edit.txt'), 'the user’s own edit\n');
    writeFileSync(join(world.project, 'new-dir', 'mine.txt'), 'mine\n');
    const after = treeOf(world.project);
    const refused = await handle.callText('task_cleanup', { task_id: id, discard: true });
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/^Not restored \(nothing was touched\): 2 of the paths/);
    expect(refused.text).toContain('edit.txt, new-dir/mine.txt (added since)');
    expect(refused.text).toContain(`task_cleanup ${id} with discard: true, force: true`);
    expect(treeOf(world.project)).toEqual(after);
    expect(existsSync(join(world.dataHome, 'jobs', id))).toBe(true);

    // The same from a terminal, in its own words.
    const refusedHere = await cli(world, 'cleanup', id, '--discard');
    expect(refusedHere.code).toBe(1);
    expect(refusedHere.stderr).toContain(`delegate cleanup ${id} --discard --force`);
    const forced = await cli(world, 'cleanup', id, '--discard', '--force');
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toContain(`${id}: cleaned up; ${world.project} put back as it was`);
    expect(treeOf(world.project)).toEqual(before);
  });

  it('cleanup without discard keeps the changes, and says so', async ({ startWith, world }) => {
    writeFolder(world);
    const handle = await startWith(EDITS);
    const { id } = await runInPlace(handle);
    const after = treeOf(world.project);
    const cleaned = await handle.callText('task_cleanup', { task_id: id });
    expect(cleaned.text).toBe(
      `${id}: cleaned up; its changes in ${world.project} are kept (the snapshot is removed)`,
    );
    expect(treeOf(world.project)).toEqual(after);
  });

  it.for([
    [
      '20,001 files',
      (world: TempEnv) => {
        for (let index = 0; index < 20_001; index += 1) {
          const dir = join(world.project, `d${index % 100}`);
          if (index < 100) mkdirSync(dir);
          writeFileSync(join(dir, `f${index}`), '');
        }
      },
      /more than 20000 files and folders/,
    ],
    [
      '600 MB',
      (world: TempEnv) => {
        writeFileSync(join(world.project, 'big.bin'), '');
        truncateSync(join(world.project, 'big.bin'), 600 * 1024 * 1024);
      },
      /1 file or folder, 600\.0 MB/,
    ],
  ] as const)(
    'a folder too big to snapshot (%s) is refused before anything is made',
    async ([, fill, says], { startWith, world }) => {
      fill(world);
      const handle = await startWith([{ text: 'never' }]);
      const refused = await handle.callText('task_start', { task: 'x', isolation: 'none' });
      expect(refused.isError).toBe(true);
      expect(refused.text).toMatch(says);
      expect(refused.text).toContain('too big to snapshot');
      expect(refused.text).toContain('Pass a smaller workdir');
      expect(jobFolders(world)).toEqual([]);
    },
  );

  it("a workdir holding delegate's own data home: left out of the snapshot, and said so", async ({
    startWith,
    world,
  }) => {
    world.writeProjectFile('a.txt', 'a\n');
    const handle = await startWith(
      [{ toolUses: [tool('write_file', { path: 'made.txt', content: 'm\n' })] }, { text: 'Made.' }],
      { CLAUDE_PROJECT_DIR: world.root },
    );
    const { id, started } = await runInPlace(handle);
    expect(started).toContain("left out: data (delegate's data)");
    expect(changesOf(world, id)).toEqual(['A made.txt']);
  });
});

describe('in place in a git repository', () => {
  it("lists the worker's changes from the disk: ignored files in, the user's own uncommitted changes out", async ({
    startWith,
    world,
  }) => {
    initRepository(world.project, { '.gitignore': 'debug.log\n', 'src/add.js': 'a - b\n' });
    writeFileSync(join(world.project, 'src', 'add.js'), 'the user’s uncommitted edit\n');
    writeFileSync(join(world.project, 'debug.log'), 'ignored\n');
    const before = treeOf(world.project);
    const handle = await startWith([
      {
        toolUses: [
          tool('write_file', { path: 'debug.log', content: 'rewritten by the worker\n' }),
          tool('write_file', { path: 'notes.md', content: 'notes\n' }),
        ],
      },
      { text: 'Done.' },
    ]);
    const { id, started } = await runInPlace(handle);
    expect(started).toContain('left out: .git (git metadata)');
    expect(changesOf(world, id)).toEqual(['A notes.md', 'M debug.log']);
    const cleaned = await handle.callText('task_cleanup', { task_id: id, discard: true });
    expect(cleaned.isError, cleaned.text).toBe(false);
    expect(treeOf(world.project)).toEqual(before);
    expect(git(world.project, 'status', '--porcelain')).toBe('M src/add.js');
  });
});

describe('in place in a git repository with big ignored folders', () => {
  it('leaves the folders git ignores out of the snapshot, and says so: a node_modules never blocks a task', async ({
    startWith,
    world,
  }) => {
    initRepository(world.project, { '.gitignore': 'node_modules/\n', 'src/a.js': 'a\n' });
    // More entries than a snapshot takes, all of them in an ignored folder.
    for (let folder = 0; folder < 50; folder += 1) {
      const dir = join(world.project, 'node_modules', `pkg-${folder}`);
      mkdirSync(dir, { recursive: true });
      for (let file = 0; file < 500; file += 1) writeFileSync(join(dir, `f${file}.js`), '');
    }
    const handle = await startWith([
      { toolUses: [tool('write_file', { path: 'src/b.js', content: 'b\n' })] },
      { text: 'Done.' },
    ]);
    const { id, started } = await runInPlace(handle);
    expect(started).toContain('node_modules (ignored by git, not snapshotted)');
    expect(changesOf(world, id)).toEqual(['A src/b.js']);
  });
});

describe('discard on a worktree task', () => {
  it('deletes the branch even with unmerged work; contradictory asks are refused first', async ({
    startWith,
    world,
  }) => {
    initRepository(world.project, BROKEN_ADD_PROJECT);
    const handle = await startWith([
      { toolUses: [tool('write_file', { path: 'made.txt', content: 'm\n' })] },
      { text: 'Made.' },
    ]);
    const started = await handle.callText('task_start', { task: 'Make made.txt' });
    const id = taskIdOf(started.text);
    await pollTaskStatus(handle, id, /done|failed|lost|timeout/);
    await handle.callText('task_result', { task_id: id });
    for (const [args, says] of [
      [{ all_finished: true, discard: true }, 'name it with task_id, not all_finished'],
      [{ task_id: id, force: true }, 'force goes with discard'],
      [{ task_id: id, discard: true, keep_branch: true }, 'pass one'],
    ] as const) {
      const refused = await handle.callText('task_cleanup', args);
      expect(refused.isError, JSON.stringify(args)).toBe(true);
      expect(refused.text).toContain(says);
    }
    expect(git(world.project, 'branch', '--list', `delegate/${id}`)).not.toBe('');
    const discarded = await handle.callText('task_cleanup', { task_id: id, discard: true });
    expect(discarded.text).toBe(`${id}: cleaned up; branch delegate/${id} deleted`);
    expect(git(world.project, 'branch', '--list', 'delegate/*')).toBe('');
  });
});
