import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { missingObjects, repositoryDamage } from '../../server/src/tasks/git-integrity.ts';
import { HARDENED_KEYS } from '../../server/src/git/git.ts';
import {
  describeChanges,
  isGitRepository,
  recordGit,
  snapshotWork,
  workingDiff,
} from '../../server/src/tasks/worktree.ts';
import { createWorktree, removeWorktree } from '../../server/src/tasks/worktree-lifecycle.ts';
import { GIT_IDENTITY } from '../helpers/git-project.ts';

/**
 * Every key of a repository's own config that makes git run a command, each running a marker.
 * Filter drivers are not here: they run on `git add` by design (Git LFS is one) and come only
 * from config files a worker cannot write (see docs/sandbox.md).
 */
const COMMAND_KEYS: Array<[key: string, value: (marker: string) => string]> = [
  ['core.fsmonitor', (marker) => marker],
  ['core.hooksPath', () => 'evil-hooks'],
  ['core.sshCommand', (marker) => marker],
  ['core.editor', (marker) => marker],
  ['sequence.editor', (marker) => marker],
  ['core.pager', (marker) => marker],
  ['credential.helper', (marker) => `!${marker}`],
  ['diff.external', (marker) => marker],
  ['diff.pwn.textconv', (marker) => marker],
  ['diff.pwn.command', (marker) => marker],
  ['gpg.program', (marker) => marker],
  ['commit.gpgSign', () => 'true'],
  ['gc.auto', () => '1'],
  ['include.path', () => 'included.config'],
];
const HOOKS = [
  'pre-commit',
  'prepare-commit-msg',
  'commit-msg',
  'post-commit',
  'post-checkout',
  'reference-transaction',
  'post-index-change',
  'pre-auto-gc',
];

let root: string;
let repo: string;
const markers = () => readdirSync(root).filter((name) => name.startsWith('ran-'));
const run = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, ...GIT_IDENTITY } });

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'delegate-git-hardening-')));
  repo = join(root, 'repo');
  mkdirSync(repo);
  run(repo, 'init', '-q', '-b', 'main');
  writeFileSync(join(repo, 'a.txt'), 'a\n');
  run(repo, 'add', '-A');
  run(repo, 'commit', '-qm', 'initial');
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** Plants every command key into the repository's own config, and hooks in every hook folder. */
function plant(worktree?: string): void {
  for (const [key, value] of COMMAND_KEYS) {
    run(repo, 'config', key, value(`touch ${root}/ran-${key.replaceAll('.', '_')}`));
  }
  writeFileSync(
    join(repo, '.git', 'included.config'),
    `[core]\n\tfsmonitor = touch ${root}/ran-included\n`,
  );
  for (const dir of [
    join(repo, '.git', 'hooks'),
    join(repo, 'evil-hooks'),
    ...(worktree ? [join(worktree, 'evil-hooks')] : []),
  ]) {
    mkdirSync(dir, { recursive: true });
    for (const hook of HOOKS) {
      writeFileSync(join(dir, hook), `#!/bin/sh\ntouch ${root}/ran-hook-${hook}\n`);
      chmodSync(join(dir, hook), 0o755);
    }
  }
  for (const dir of [repo, ...(worktree ? [worktree] : [])])
    writeFileSync(join(dir, '.gitattributes'), '* diff=pwn\n');
}

describe('git as the product runs it, in a repository whose own config runs commands', () => {
  it('pins a key per hardened setting (the list in git.ts is the one tested here)', () => {
    for (const key of [
      'core.fsmonitor',
      'core.hooksPath',
      'core.sshCommand',
      'core.editor',
      'core.pager',
      'credential.helper',
      'commit.gpgSign',
      'gc.auto',
    ]) {
      expect(HARDENED_KEYS).toContain(key);
    }
  });

  it("a planted config is really live for the user's own git (the control)", () => {
    plant();
    writeFileSync(join(repo, 'a.txt'), 'changed\n');
    run(repo, 'status');
    expect(markers()).toEqual(
      expect.arrayContaining(['ran-included', 'ran-hook-post-index-change']),
    );
  });

  it('salvage, diffs, the repository check and cleanup of a worktree task run none of it', async () => {
    const created = await createWorktree({
      dataHome: join(root, 'data'),
      repoDir: repo,
      worktreePath: join(root, 'wt'),
      branch: 'delegate/t_x',
    });
    plant(created.path);
    writeFileSync(join(created.path, 'a.txt'), 'changed by the worker\n');
    writeFileSync(join(created.path, 'b.txt'), 'new\n');
    expect(await workingDiff(created.git, created.baseCommit)).toContain('changed by the worker');
    const snapshot = await snapshotWork({
      repository: created.git,
      baseCommit: created.baseCommit,
      message: 'work',
      patchPath: join(root, 'patch.diff'),
    });
    const paths = snapshot.filesChanged.map((change) => change.path);
    expect(paths).toEqual(expect.arrayContaining(['a.txt', 'b.txt']));
    expect(snapshot.commit).toBeDefined();
    expect(await repositoryDamage(created.git)).toEqual([]);
    const removed = await removeWorktree({
      dataHome: join(root, 'data'),
      repoDir: repo,
      commonDir: created.git.commonDir,
      worktreePath: created.path,
      branch: 'delegate/t_x',
    });
    expect(removed).toMatchObject({ worktreeRemoved: true, branchDeleted: false });
    expect(markers()).toEqual([]);
  });

  it('the in-place facts and the repository check run none of it', async () => {
    const recorded = await recordGit(repo);
    plant();
    writeFileSync(join(repo, 'a.txt'), 'changed in place\n');
    const facts = await describeChanges(recorded);
    expect(facts.filesChanged).toContainEqual({ status: 'M', path: 'a.txt' });
    expect(await workingDiff(recorded)).toContain('changed in place');
    expect(await repositoryDamage(recorded)).toEqual([]);
    expect(markers()).toEqual([]);
  });
});

describe('a folder shaped like a bare repository, under any name', () => {
  it('is never the repository the product finds from a folder inside it', async () => {
    const evil = join(repo, 'evil');
    for (const folder of ['objects', 'refs/heads'])
      mkdirSync(join(evil, folder), { recursive: true });
    writeFileSync(join(evil, 'HEAD'), 'ref: refs/heads/main\n');
    writeFileSync(join(evil, 'config'), '[core]\n\tbare = false\n\tworktree = ..\n');
    // The control: the user's own git takes it for a repository whose work tree is the project.
    expect(run(evil, 'rev-parse', '--absolute-git-dir').trim()).toBe(evil);
    // The product's git (safe.bareRepository=explicit) never does: no task pins it.
    expect(await isGitRepository(evil)).toBe(false);
    await expect(recordGit(evil)).rejects.toThrow(/bare repository/);
  });
});

describe('the repository check', () => {
  it('names a HEAD that no longer resolves and a history with missing objects', async () => {
    const recorded = await recordGit(repo);
    expect(await repositoryDamage(recorded)).toEqual([]);
    const objects = join(repo, '.git', 'objects');
    const loose = readdirSync(objects).filter((name) => /^[0-9a-f]{2}$/.test(name));
    rmSync(join(objects, loose[0]!), { recursive: true });
    expect((await repositoryDamage(recorded)).join()).toMatch(
      /HEAD \(refs\/heads\/main\) no longer resolves|git fsck finds the history broken/,
    );
    writeFileSync(join(repo, '.git', 'HEAD'), '');
    expect((await repositoryDamage(recorded)).join()).toMatch(
      /no longer resolves|refs can no longer be read/,
    );
  });

  it("names a commit gone from a branch's history (fsck says so on stdout alone)", async () => {
    const recorded = await recordGit(repo);
    run(repo, 'checkout', '-q', '-b', 'side');
    for (const name of ['one', 'two']) {
      writeFileSync(join(repo, `${name}.txt`), `${name}\n`);
      run(repo, 'add', `${name}.txt`);
      run(repo, 'commit', '-q', '-m', name);
    }
    const gone = run(repo, 'rev-parse', 'HEAD~1').trim();
    run(repo, 'checkout', '-q', 'main');
    rmSync(join(repo, '.git', 'objects', gone.slice(0, 2), gone.slice(2)));
    const damage = (await repositoryDamage(recorded)).join();
    expect(damage).toContain('git fsck finds the history broken: ');
    expect(damage).toContain(gone);
  });

  // fsck lists objects before it follows refs: a commit written in between (another task's end)
  // is "missing" to it. Only such findings, for objects that are there after all, are not damage.
  const failure = (stdout: string, stderr = '') =>
    Object.assign(new Error('git fsck failed'), { cause: { stdout, stderr } });
  const sha = 'a'.repeat(40);
  it.each([
    [`missing commit ${sha}\n`, '', [sha]],
    [`missing commit ${sha}\nmissing blob ${'b'.repeat(64)}\n`, '', [sha, 'b'.repeat(64)]],
    [`missing commit ${sha}\n`, 'error: refs/heads/x: invalid sha1 pointer', undefined],
    [`broken link from  commit ${sha}\n              to    tree ${sha}\n`, '', undefined],
    [`missing commit ${sha}\nnotice: HEAD points to an unborn branch\n`, '', undefined],
    ['', '', undefined],
  ])('fsck output %j (stderr %j): objects only missing are %j', (stdout, stderr, expected) => {
    expect(missingObjects(failure(stdout, stderr))).toEqual(expected);
  });
});
