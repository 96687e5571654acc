import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  describeChanges,
  isGitRepository,
  mergeInstructions,
  recordGit,
  recordStartedTask,
  repositoryRoot,
  snapshotWork,
  workingDiff,
} from '../../server/src/tasks/worktree.ts';
import { createWorktree, removeWorktree } from '../../server/src/tasks/worktree-lifecycle.ts';
import { snapshotWorkingTree } from '../../server/src/tasks/working-tree.ts';
import { makeWorktree } from '../../server/src/tasks/task-place.ts';

const BRANCH = 'delegate/t_abc123';
const BINARY = Buffer.from([0, 1, 2, 255, 254, 0, 10, 13, 0]);
/** The test's own git commits need an identity; the code under test must not. */
const TESTER = {
  GIT_AUTHOR_NAME: 'Tester',
  GIT_AUTHOR_EMAIL: 'tester@example.invalid',
  GIT_COMMITTER_NAME: 'Tester',
  GIT_COMMITTER_EMAIL: 'tester@example.invalid',
};
const savedEnv = { ...process.env };

let configDir: string;
let root: string;
let repo: string;
let worktreePath: string;

/** The test's own git, which runs no hooks. */
function run(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'core.hooksPath=/dev/null', ...args], {
    cwd,
    env: { ...process.env, ...TESTER },
    encoding: 'utf8',
  }).trim();
}

beforeAll(() => {
  // As on a CI machine: no global or system git config, hence no identity.
  configDir = mkdtempSync(join(tmpdir(), 'delegate-gitconfig-'));
  writeFileSync(join(configDir, 'gitconfig'), '');
  process.env.GIT_CONFIG_GLOBAL = join(configDir, 'gitconfig');
  process.env.GIT_CONFIG_NOSYSTEM = '1';
  for (const name of Object.keys(TESTER)) delete process.env[name];
});
afterAll(() => {
  rmSync(configDir, { recursive: true, force: true });
  process.env = savedEnv;
});
beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'delegate-worktree-')));
  repo = join(root, 'repo');
  worktreePath = join(root, 'data', 'worktrees', 'repo', 't_abc123');
  mkdirSync(repo);
  run(repo, 'init', '--quiet', '--initial-branch=main');
  writeFileSync(join(repo, 'keep.txt'), 'line 1\nline 2\n');
  writeFileSync(join(repo, 'gone.txt'), 'to be deleted\n');
  run(repo, 'add', '--all');
  run(repo, 'commit', '--quiet', '-m', 'initial');
  // Hooks that fail and leave a mark: none may run for the worker (--no-verify skips only some).
  for (const hook of ['pre-commit', 'prepare-commit-msg', 'post-commit', 'post-checkout']) {
    const script = `#!/bin/sh\ntouch '${root}/hook-ran'\nexit 1\n`;
    writeFileSync(join(repo, '.git', 'hooks', hook), script, { mode: 0o755 });
  }
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** The data home whose locks the worktree changes take. */
const dataHome = () => join(root, 'data');

function start(branch = BRANCH, baseRef?: string, path = worktreePath) {
  return createWorktree({
    dataHome: dataHome(),
    repoDir: repo,
    worktreePath: path,
    branch,
    baseRef,
  });
}

function workerEdits(dir: string): void {
  writeFileSync(join(dir, 'keep.txt'), 'line 1\nline 2 changed\n');
  writeFileSync(join(dir, 'added.txt'), 'new file\n');
  writeFileSync(join(dir, 'image.bin'), BINARY);
  unlinkSync(join(dir, 'gone.txt'));
}

describe('repository queries', () => {
  it('tells repositories from plain directories and describes uncommitted changes', async () => {
    expect(await isGitRepository(repo)).toBe(true);
    expect(await isGitRepository(root)).toBe(false);
    expect(await repositoryRoot(repo)).toBe(repo);
    const recorded = await recordGit(repo);
    expect(recorded).toMatchObject({ gitDir: join(repo, '.git'), commonDir: join(repo, '.git') });
    expect(recorded.pointer).toBeUndefined();
    expect(await describeChanges(recorded)).toEqual({ filesChanged: [], diffstat: '' });
    workerEdits(repo);
    const facts = await describeChanges(recorded);
    expect(facts?.filesChanged).toEqual([
      { status: 'A', path: 'added.txt' },
      { status: 'D', path: 'gone.txt' },
      { status: 'A', path: 'image.bin' },
      { status: 'M', path: 'keep.txt' },
    ]);
    expect(facts?.diffstat).toContain('4 files changed');
    // Nothing committed or staged: the user's index is untouched.
    expect(run(repo, 'diff', '--cached', '--name-only')).toBe('');
    expect(run(repo, 'rev-list', '--count', 'HEAD')).toBe('1');
  });
});

describe('a file rewritten at the same size in the same second as the index ("racily clean")', () => {
  it('shows in the working diff and the change list, as it does for git itself', async () => {
    const recorded = await recordGit(repo);
    const file = join(repo, 'keep.txt');
    const index = join(repo, '.git', 'index');
    const second = (ms: number) => Math.floor(ms / 1000);
    // The index is written, then the file rewritten at the same size, within one second: its
    // recorded size and times still match, and only git's racy check tells them apart.
    for (let tries = 0; ; tries += 1) {
      writeFileSync(file, 'line 1\nline 2\n');
      run(repo, 'add', 'keep.txt');
      writeFileSync(file, 'line 1\nLINE 2\n');
      const { mtimeMs } = statSync(index);
      const { ctimeMs, mtimeMs: fileMs } = statSync(file);
      if (second(mtimeMs) === second(ctimeMs) && second(mtimeMs) === second(fileMs)) break;
      if (tries === 5) throw new Error('could not write the file in the index second');
    }
    // A copy made later would carry a later time and trust the stale stat.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(run(repo, 'diff', '--name-only')).toBe('keep.txt');
    expect(await workingDiff(recorded)).toContain('+LINE 2');
    expect((await describeChanges(recorded)).filesChanged).toContainEqual({
      status: 'M',
      path: 'keep.txt',
    });
  });
});

describe('worktree lifecycle', () => {
  it('creates the worktree on a new branch without touching the main checkout', async () => {
    const main = run(repo, 'rev-parse', 'main');
    const created = await start();
    expect(created).toMatchObject({ path: worktreePath, branch: BRANCH, baseCommit: main });
    expect(created.git).toMatchObject({
      gitDir: join(repo, '.git', 'worktrees', basename(worktreePath)),
      commonDir: join(repo, '.git'),
      workTree: worktreePath,
      startCommit: main,
    });
    expect(created.git.pointer).toBe(readFileSync(join(worktreePath, '.git'), 'utf8'));
    expect(readFileSync(join(worktreePath, 'keep.txt'), 'utf8')).toBe('line 1\nline 2\n');
    expect(run(repo, 'rev-parse', BRANCH)).toBe(main);
    expect(run(repo, 'branch', '--show-current')).toBe('main');
    expect(run(repo, 'status', '--porcelain')).toBe('');
    expect(existsSync(join(root, 'hook-ran'))).toBe(false);
  });

  it("finds a task's git from the repository for a task started before it was recorded", async () => {
    const created = await start();
    const job = {
      isolation: 'worktree' as const,
      workdir: worktreePath,
      repoDir: repo,
      worktreePath,
    };
    const recorded = { ...created.git, startCommit: undefined };
    delete recorded.startCommit;
    expect(await recordStartedTask(job)).toEqual(recorded);
    // A re-pointed worktree is not followed: the repository's own record says where it is.
    writeFileSync(join(worktreePath, '.git'), `gitdir: ${join(root, 'elsewhere')}\n`);
    expect(await recordStartedTask(job)).toEqual(recorded);
    expect(await recordStartedTask({ isolation: 'none', workdir: root })).toBeUndefined();
  });

  it('snapshots modified, added, deleted and binary files into a patch that applies', async () => {
    const { baseCommit, git: repository } = await start();
    workerEdits(worktreePath);
    const patchPath = join(root, 'data', 'jobs', 't_abc123', 'patch.diff');
    const options = { repository, baseCommit, message: 'delegate: t_abc123', patchPath };
    const first = await snapshotWork(options);

    expect(first.filesChanged).toEqual([
      { status: 'A', path: 'added.txt' },
      { status: 'D', path: 'gone.txt' },
      { status: 'A', path: 'image.bin' },
      { status: 'M', path: 'keep.txt' },
    ]);
    expect(first.diffstat).toMatch(/image\.bin \| Bin 0 -> 9 bytes/);
    expect(first.commit).toBe(run(repo, 'rev-parse', BRANCH));
    expect(first.patchBytes).toBe(readFileSync(patchPath).length);
    expect(run(repo, 'log', '-1', '--format=%an <%ae> %s', BRANCH)).toBe(
      'delegate worker <worker@delegate.invalid> delegate: t_abc123',
    );
    expect(run(repo, 'rev-parse', 'main')).toBe(baseCommit);
    expect(run(repo, 'status', '--porcelain')).toBe('');
    expect(existsSync(join(root, 'hook-ran'))).toBe(false);

    const clone = join(root, 'clone');
    run(root, 'clone', '--quiet', '--branch', 'main', repo, clone);
    run(clone, 'apply', patchPath);
    expect(readFileSync(join(clone, 'keep.txt'), 'utf8')).toBe('line 1\nline 2 changed\n');
    expect(readFileSync(join(clone, 'image.bin'))).toEqual(BINARY);
    expect(existsSync(join(clone, 'gone.txt'))).toBe(false);

    expect(await snapshotWork(options)).toEqual(first);
    expect(run(repo, 'rev-list', '--count', `${baseCommit}..${BRANCH}`)).toBe('1');
  });

  it('keeps commits the worker made and reports a worktree without changes as empty', async () => {
    const { baseCommit, git: repository } = await start();
    const patchPath = join(root, 'patch.diff');
    const options = { repository, baseCommit, message: 'salvage', patchPath };
    expect(await snapshotWork(options)).toEqual({
      commit: undefined,
      filesChanged: [],
      diffstat: '',
      patchBytes: 0,
    });
    writeFileSync(join(worktreePath, 'added.txt'), 'committed by the worker\n');
    run(worktreePath, 'add', 'added.txt');
    run(worktreePath, 'commit', '--quiet', '-m', 'worker commit');
    writeFileSync(join(worktreePath, 'later.txt'), 'left uncommitted\n');
    const facts = await snapshotWork(options);
    expect(facts.filesChanged.map((change) => change.path)).toEqual(['added.txt', 'later.txt']);
    expect(run(repo, 'log', '--format=%s', `${baseCommit}..${BRANCH}`)).toBe(
      'salvage\nworker commit',
    );
  });

  it('starts from a tag or a branch and refuses an existing branch or an unknown base', async () => {
    run(repo, 'tag', 'v1');
    writeFileSync(join(repo, 'keep.txt'), 'on main later\n');
    run(repo, 'commit', '--quiet', '--all', '-m', 'later');
    run(repo, 'branch', 'feature', 'v1');
    const fromTag = await start(BRANCH, 'v1');
    expect(fromTag.baseCommit).toBe(run(repo, 'rev-parse', 'v1^{commit}'));
    expect(readFileSync(join(worktreePath, 'keep.txt'), 'utf8')).toBe('line 1\nline 2\n');
    const fromBranch = await start('delegate/t_2', 'feature', join(root, 'other'));
    expect(fromBranch.baseCommit).toBe(run(repo, 'rev-parse', 'feature'));

    const fourth = join(root, 'fourth');
    await expect(start(BRANCH, undefined, fourth)).rejects.toThrow(
      `Branch ${BRANCH} already exists`,
    );
    await expect(start('delegate/t_4', 'nope', fourth)).rejects.toThrow(
      'Base ref "nope" does not name a commit',
    );
    await expect(start('delegate/t_5', 'main', join(repo, 'inside'))).rejects.toThrow(
      'is inside the repository',
    );
    expect(existsSync(fourth)).toBe(false);
  });

  it('removes the worktree, keeping an unmerged branch unless it was merged', async () => {
    const { baseCommit, git: repository } = await start();
    workerEdits(worktreePath);
    const patchPath = join(root, 'patch.diff');
    await snapshotWork({ repository, baseCommit, message: 'work', patchPath });
    run(repo, 'branch', 'unrelated');
    const removal = { dataHome: dataHome(), repoDir: repo, worktreePath, branch: BRANCH };

    const unmerged = await removeWorktree(removal);
    expect(unmerged).toMatchObject({ worktreeRemoved: true, branchDeleted: false });
    expect(unmerged.note).toContain('not merged');
    expect(existsSync(worktreePath)).toBe(false);

    run(repo, 'merge', '--quiet', '--no-ff', '-m', 'merge', BRANCH);
    expect(await removeWorktree({ ...removal, keepBranch: true })).toEqual({
      worktreeRemoved: false,
      branchDeleted: false,
      note: `Branch ${BRANCH} kept as asked.`,
    });
    expect(await removeWorktree(removal)).toEqual({ worktreeRemoved: false, branchDeleted: true });
    expect(await removeWorktree(removal)).toEqual({ worktreeRemoved: false, branchDeleted: false });
    expect(run(repo, 'branch', '--format=%(refname:short)')).toBe('main\nunrelated');
  });

  it('removes a worktree whose directory is already gone and deletes an untouched branch', async () => {
    await start();
    rmSync(worktreePath, { recursive: true, force: true });
    expect(
      await removeWorktree({ dataHome: dataHome(), repoDir: repo, worktreePath, branch: BRANCH }),
    ).toEqual({
      worktreeRemoved: true,
      branchDeleted: true,
    });
    expect(run(repo, 'worktree', 'list', '--porcelain')).not.toContain(worktreePath);
  });

  it('writes merge instructions that can be pasted into a shell', () => {
    const text = mergeInstructions({
      repoDir: '/work/my repo',
      branch: BRANCH,
      baseCommit: 'abc123',
      patchPath: '/data/jobs/t_abc123/patch.diff',
    });
    expect(text).toContain(`git -C '/work/my repo' merge --no-ff ${BRANCH}`);
    expect(text).toContain(`cherry-pick abc123..${BRANCH}`);
    expect(text).toContain('apply /data/jobs/t_abc123/patch.diff');
  });
});

describe("a task's worktree (makeWorktree)", () => {
  it('from a folder inside the repository: recorded as from its top, the folder and the uncommitted work in it', async () => {
    mkdirSync(join(repo, 'pkg', 'sub'), { recursive: true });
    writeFileSync(join(repo, 'pkg', 'sub', 'new.txt'), 'untracked\n');
    writeFileSync(join(repo, 'keep.txt'), 'line 1\nedited\n');
    const top = await recordGit(repo);

    const place = await makeWorktree('t_abc123', join(repo, 'pkg', 'sub'), undefined, dataHome());

    expect(place.repoDir).toBe(repo);
    expect(place.worktreePath).toBe(worktreePath);
    expect(place.workdir).toBe(join(worktreePath, 'pkg', 'sub'));
    expect(readFileSync(join(place.workdir, 'new.txt'), 'utf8')).toBe('untracked\n');
    expect(readFileSync(join(worktreePath, 'keep.txt'), 'utf8')).toBe('line 1\nedited\n');
    expect(place.uncommittedAtStart).toEqual({ head: top.startCommit, files: 2 });
    // What the task records of its worktree is what git says of it afresh.
    expect(place.git).toEqual(await recordGit(worktreePath));
    expect(place.git!.commonDir).toBe(top.commonDir);
    expect(place.baseCommit).toBe(place.git!.startCommit);
    expect(run(repo, 'status', '--porcelain')).toBe('M keep.txt\n?? pkg/');
  });
});

describe('snapshot of the working tree', () => {
  /** Everything the user could lose: index, stash list, status and file contents. */
  function userState(): string[] {
    const index = readFileSync(join(repo, '.git', 'index')).toString('base64');
    const files = ['keep.txt', 'staged.txt', 'new.txt', 'build.log', '.gitignore'].map((name) =>
      existsSync(join(repo, name)) ? readFileSync(join(repo, name), 'utf8') : '-',
    );
    return [index, run(repo, 'stash', 'list'), run(repo, 'status', '--porcelain'), ...files];
  }

  it('is a commit on HEAD of what the user sees, leaving index, stash and files alone', async () => {
    writeFileSync(join(repo, '.gitignore'), 'build.log\n');
    writeFileSync(join(repo, 'staged.txt'), 'staged\n');
    run(repo, 'add', '.gitignore', 'staged.txt');
    writeFileSync(join(repo, 'keep.txt'), 'line 1\nedited, not staged\n');
    writeFileSync(join(repo, 'new.txt'), 'untracked\n');
    writeFileSync(join(repo, 'build.log'), 'ignored\n');
    unlinkSync(join(repo, 'gone.txt'));
    const before = userState();
    const head = run(repo, 'rev-parse', 'HEAD');

    const snapshot = await snapshotWorkingTree(await recordGit(repo));

    expect(snapshot).toMatchObject({ head, files: 5 });
    const commit = snapshot!.commit;
    expect(run(repo, 'rev-parse', `${commit}^`)).toBe(head);
    expect(run(repo, 'show', `${commit}:keep.txt`)).toBe('line 1\nedited, not staged');
    expect(run(repo, 'show', `${commit}:staged.txt`)).toBe('staged');
    expect(run(repo, 'show', `${commit}:new.txt`)).toBe('untracked');
    const tree = run(repo, 'ls-tree', '-r', '--name-only', commit).split('\n');
    expect(tree.sort()).toEqual(['.gitignore', 'keep.txt', 'new.txt', 'staged.txt']);
    expect(userState()).toEqual(before);
    expect(run(repo, 'branch', '--contains', commit)).toBe('');
    expect(existsSync(join(root, 'hook-ran'))).toBe(false);
  });

  it('is undefined for a clean checkout (ignored files aside) and a repository without commits', async () => {
    writeFileSync(join(repo, '.git', 'info', 'exclude'), 'build.log\n');
    writeFileSync(join(repo, 'build.log'), 'ignored\n');
    expect(await snapshotWorkingTree(await recordGit(repo))).toBeUndefined();
    const empty = join(root, 'empty');
    mkdirSync(empty);
    run(empty, 'init', '--quiet');
    writeFileSync(join(empty, 'a.txt'), 'a\n');
    expect(await snapshotWorkingTree(await recordGit(empty))).toBeUndefined();
  });

  it("cleanup deletes a branch still at the snapshot, and keeps one with the worker's commit", async () => {
    writeFileSync(join(repo, 'keep.txt'), 'edited\n');
    const { commit } = (await snapshotWorkingTree(await recordGit(repo)))!;
    await createWorktree({
      dataHome: dataHome(),
      repoDir: repo,
      worktreePath,
      branch: BRANCH,
      baseRef: commit,
    });
    const untouched = await removeWorktree({
      dataHome: dataHome(),
      repoDir: repo,
      worktreePath,
      branch: BRANCH,
      snapshotBase: commit,
    });
    expect(untouched).toMatchObject({ worktreeRemoved: true, branchDeleted: true });
    const created = await createWorktree({
      dataHome: dataHome(),
      repoDir: repo,
      worktreePath,
      branch: BRANCH,
      baseRef: commit,
    });
    writeFileSync(join(created.path, 'work.txt'), 'work\n');
    await snapshotWork({
      repository: created.git,
      baseCommit: commit,
      message: 'work',
      patchPath: join(root, 'patch.diff'),
    });
    const worked = await removeWorktree({
      dataHome: dataHome(),
      repoDir: repo,
      worktreePath,
      branch: BRANCH,
      snapshotBase: commit,
    });
    expect(worked).toMatchObject({ worktreeRemoved: true, branchDeleted: false });
    expect(run(repo, 'show', `${BRANCH}:work.txt`)).toBe('work');
  });

  it('gives merge instructions that apply the patch onto the uncommitted changes', () => {
    const text = mergeInstructions({
      repoDir: '/work/repo',
      branch: BRANCH,
      baseCommit: 'abc123',
      patchPath: '/data/patch.diff',
      isFromUncommitted: true,
    });
    expect(text).toContain('started from your uncommitted changes');
    expect(text).toContain('git -C /work/repo apply /data/patch.diff');
    expect(text).toContain(`cherry-pick abc123..${BRANCH}`);
    expect(text).not.toContain('merge --no-ff');
  });
});
