import { mkdir, readdir, readFile, realpath, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import {
  assertBranchName,
  diffFacts,
  git,
  PLAIN_DIFF,
  resolveCommit,
  tryGit,
  workerIdentity,
  writePatch,
  type ChangeFacts,
  type GitOptions,
} from '../git/git.ts';
import { errorMessage } from '../util/user-error.ts';
import { withIndexCopy, type ScratchIndexOptions } from './working-tree.ts';
import type { JobFile, PinnedRepository, RecordedGit } from '../store/job-file.ts';
import { removeRemoteTask } from '../runners/remote-shell.ts';

export type { ChangeFacts, FileChange } from '../git/git.ts';

export async function isGitRepository(dir: string): Promise<boolean> {
  return (await tryGit(dir, ['rev-parse', '--is-inside-work-tree']))?.trim() === 'true';
}

/** Top of the repository containing dir (realpath). */
export async function repositoryRoot(dir: string): Promise<string> {
  return realpath((await git(dir, ['rev-parse', '--show-toplevel'])).trim());
}

/** Records where the repository containing dir keeps its metadata (real paths). */
export async function recordGit(dir: string): Promise<RecordedGit> {
  const [gitDir = '', commonDir = '', workTree = ''] = (
    await git(dir, ['rev-parse', '--absolute-git-dir', '--git-common-dir', '--show-toplevel'])
  ).split('\n');
  const top = await realpath(workTree);
  const recorded: RecordedGit = {
    gitDir: await realpath(gitDir),
    commonDir: await realpath(resolve(dir, commonDir)),
    workTree: top,
  };
  const pointer = await readFile(join(top, '.git'), 'utf8').catch(() => undefined);
  const startCommit = await resolveCommit(dir, 'HEAD', { repository: recorded });
  return {
    ...recorded,
    ...(pointer !== undefined ? { pointer } : {}),
    ...(startCommit ? { startCommit } : {}),
  };
}

/**
 * The recorded git of a task started before tasks recorded it (an upgrade while it ran), so
 * that its work is still salvaged: a worktree's git directory is found from the user's
 * repository (`<common dir>/worktrees/*\/gitdir` naming the worktree), never from the
 * worktree's own `.git`; an in-place task's as at the start. Undefined outside git.
 */
export async function recordStartedTask(job: {
  isolation: 'worktree' | 'none';
  workdir: string;
  repoDir?: string;
  worktreePath?: string;
}): Promise<RecordedGit | undefined> {
  if (job.isolation === 'none' || !job.repoDir || !job.worktreePath) {
    return (await isGitRepository(job.workdir)) ? recordGit(job.workdir) : undefined;
  }
  const common = (await git(job.repoDir, ['rev-parse', '--git-common-dir'])).trim();
  const commonDir = await realpath(resolve(job.repoDir, common));
  const workTree = await realpath(job.worktreePath).catch(() => job.worktreePath!);
  const entries = await readdir(join(commonDir, 'worktrees')).catch(() => []);
  for (const entry of entries) {
    const gitDir = join(commonDir, 'worktrees', entry);
    const named = await readFile(join(gitDir, 'gitdir'), 'utf8').catch(() => '');
    if (dirname(named.trim()) !== workTree) continue;
    return { gitDir, commonDir, workTree, pointer: `gitdir: ${gitDir}\n` };
  }
  return undefined;
}

/** The worktree's absolute path with symlinks in its parent resolved; parents are created. */
async function prepareWorktreePath(root: string, worktreePath: string): Promise<string> {
  const parent = dirname(resolve(worktreePath));
  await mkdir(parent, { recursive: true });
  const path = join(await realpath(parent), basename(worktreePath));
  const fromRoot = relative(root, path);
  if (fromRoot === '' || (!fromRoot.startsWith('..') && !isAbsolute(fromRoot))) {
    throw new Error(`Worktree path ${path} is inside the repository ${root}; choose one outside.`);
  }
  return path;
}

/**
 * Creates a worktree at worktreePath (outside the repository; parent dirs created) on a NEW
 * branch `branch` from baseRef (default HEAD of the repository; a branch name, tag or commit).
 * Fails with a clear Error when the branch exists or baseRef does not resolve.
 */
export async function createWorktree(options: {
  repoDir: string;
  worktreePath: string;
  branch: string;
  baseRef?: string;
}): Promise<{ path: string; branch: string; baseCommit: string; git: RecordedGit }> {
  const { branch, baseRef = 'HEAD' } = options;
  const root = await repositoryRoot(options.repoDir);
  await assertBranchName(root, branch);
  if (await resolveCommit(root, `refs/heads/${branch}`)) {
    throw new Error(`Branch ${branch} already exists in ${root}; use another branch name.`);
  }
  const baseCommit = await resolveCommit(root, baseRef);
  if (!baseCommit) {
    throw new Error(`Base ref "${baseRef}" does not name a commit in ${root}.`);
  }
  const path = await prepareWorktreePath(root, options.worktreePath);
  await git(root, ['worktree', 'add', '--quiet', '-b', branch, path, baseCommit]);
  const created = await realpath(path);
  return { path: created, branch, baseCommit, git: await recordGit(created) };
}

/**
 * Salvages everything the worker did in the worktree: uncommitted changes (untracked files
 * included, ignored files not) become one commit on the task branch, commits the worker made
 * itself are kept. Then writes the binary patch baseCommit..HEAD to patchPath. Idempotent.
 * `commit` is the tip of the work (HEAD), undefined while HEAD is still baseCommit.
 */
export async function snapshotWork(options: {
  repository: PinnedRepository;
  baseCommit: string;
  message: string;
  patchPath: string;
}): Promise<ChangeFacts & { commit: string | undefined; patchBytes: number }> {
  const { repository, baseCommit, patchPath } = options;
  const cwd = repository.workTree;
  const pinned = { repository };
  await git(cwd, ['add', '--all'], pinned);
  const staged = await git(cwd, ['diff', '--cached', '--name-only', '-z'], pinned);
  if (staged !== '') {
    const message = options.message.trim() || 'delegate: work of the worker';
    await git(cwd, ['commit', '--quiet', '--no-verify', '-m', message], {
      ...pinned,
      env: workerIdentity(),
    });
  }
  const head = await resolveCommit(cwd, 'HEAD', pinned);
  const revisions = [baseCommit, 'HEAD'];
  await mkdir(dirname(patchPath), { recursive: true });
  await writePatch(cwd, revisions, patchPath, pinned);
  const facts = await diffFacts(cwd, revisions, pinned);
  const { size } = await stat(patchPath);
  return { commit: head === baseCommit ? undefined : head, ...facts, patchBytes: size };
}

/**
 * The same facts for a plain directory task (isolation none) in a repository: files changed vs
 * HEAD (untracked files as additions) and a diffstat, without committing or touching the index
 * the user works with.
 */
export async function describeChanges(repository: PinnedRepository): Promise<ChangeFacts> {
  const base = await headOrEmptyTree(repository);
  return withScratchIndex(repository, (options) => diffFacts(repository.workTree, [base], options));
}

/**
 * The text diff of the checkout (untracked files included, ignored ones not) against `base`
 * (default HEAD), without committing or touching the real index.
 */
export async function workingDiff(repository: PinnedRepository, base?: string): Promise<string> {
  const from = base ?? (await headOrEmptyTree(repository));
  return withScratchIndex(repository, (options) =>
    git(repository.workTree, ['diff', ...PLAIN_DIFF, from, '--'], options),
  );
}

async function headOrEmptyTree(repository: PinnedRepository): Promise<string> {
  return (
    (await resolveCommit(repository.workTree, 'HEAD', { repository })) ??
    (await git(repository.workTree, ['hash-object', '-t', 'tree', '/dev/null'])).trim()
  );
}

/** Runs `action` with a copy of the repository's index where every file is intended-to-add. */
function withScratchIndex<T>(
  repository: PinnedRepository,
  action: (options: ScratchIndexOptions) => Promise<T>,
): Promise<T> {
  return withIndexCopy(repository, async (options) => {
    // Intent-to-add makes untracked files show up in the diff without storing their content.
    await git(repository.workTree, ['add', '--all', '--intent-to-add'], options);
    return action(options);
  });
}

/** A path as git lists it: symlinks resolved as far as the path exists. */
async function canonicalPath(path: string): Promise<string> {
  const absolute = resolve(path);
  const real = await realpath(absolute).catch(() => undefined);
  if (real) return real;
  const parent = await realpath(dirname(absolute)).catch(() => dirname(absolute));
  return join(parent, basename(absolute));
}

async function removeRegisteredWorktree(
  root: string,
  worktreePath: string,
  options: GitOptions,
): Promise<boolean> {
  const listing = await git(root, ['worktree', 'list', '--porcelain'], options);
  const registered = listing
    .split('\n')
    .filter((line) => line.startsWith('worktree '))
    .map((line) => line.slice('worktree '.length))
    .slice(1); // The first entry is the main working tree, which is never removed.
  const wanted = await canonicalPath(worktreePath);
  for (const entry of registered) {
    if ((await canonicalPath(entry)) !== wanted) continue;
    // Twice --force: also removes a locked worktree; a missing directory is unregistered.
    await git(root, ['worktree', 'remove', '--force', '--force', entry], options);
    return true;
  }
  return false;
}

async function settleBranch(
  root: string,
  branch: string,
  keepBranch: boolean,
  options: GitOptions & { snapshotBase?: string | undefined; discard?: boolean },
): Promise<{ branchDeleted: boolean; note?: string }> {
  const tip = await resolveCommit(root, `refs/heads/${branch}`, options);
  if (!tip) return { branchDeleted: false };
  if (keepBranch) return { branchDeleted: false, note: `Branch ${branch} kept as asked.` };
  // A branch still at the snapshot of the user's uncommitted changes holds no work of its own.
  const isMerged =
    options.discard === true ||
    tip === options.snapshotBase ||
    (await tryGit(root, ['merge-base', '--is-ancestor', tip, 'HEAD'], options)) !== undefined;
  if (!isMerged) {
    const note = `Branch ${branch} kept: it has commits not merged into the current HEAD; delete it with \`git branch -D ${branch}\` once you no longer need them.`;
    return { branchDeleted: false, note };
  }
  try {
    // `branch -D` (not update-ref) refuses a branch still checked out somewhere.
    await git(root, ['branch', '-D', branch], options);
    return { branchDeleted: true };
  } catch (error) {
    return { branchDeleted: false, note: `Branch ${branch} kept: ${errorMessage(error)}` };
  }
}

/**
 * Removes the worktree (force) and its branch unless keepBranch or the branch has commits not
 * merged into the repository's current HEAD (then the branch is kept and the note says why).
 * Never touches any other branch. Idempotent: a worktree or branch already gone is fine;
 * `worktreeRemoved` says whether this call removed a registered worktree. With the task's
 * recorded `commonDir`, git is pointed at it rather than finding it from `repoDir`.
 * `snapshotBase`: the snapshot commit of the user's uncommitted changes the task started from
 * (on no branch); a branch still there has nothing unmerged.
 */
export async function removeWorktree(options: {
  repoDir: string;
  commonDir?: string;
  worktreePath: string;
  branch: string;
  keepBranch?: boolean;
  /** Delete the branch even with unmerged commits (a losing attempt: its patch is kept). */
  discardBranch?: boolean;
  snapshotBase?: string;
}): Promise<{ worktreeRemoved: boolean; branchDeleted: boolean; note?: string }> {
  const root = options.commonDir ? options.repoDir : await repositoryRoot(options.repoDir);
  const pinned: GitOptions = options.commonDir
    ? { repository: { gitDir: options.commonDir, workTree: root } }
    : {};
  await assertBranchName(root, options.branch);
  const worktreeRemoved = await removeRegisteredWorktree(root, options.worktreePath, pinned);
  const keep = options.keepBranch ?? false;
  const branch = await settleBranch(root, options.branch, keep, {
    ...pinned,
    snapshotBase: options.snapshotBase,
    discard: options.discardBranch ?? false,
  });
  return { worktreeRemoved, ...branch };
}

/**
 * Moves a task's branch back to its base when the worker committed on it itself: work that is
 * not salvaged (git metadata, a key) must not stay on the branch through the worker's own
 * commits either. Returns what it did, or undefined when the branch held none.
 */
export async function takeCommitsOffBranch(
  job: Pick<JobFile, 'isolation' | 'repoDir' | 'branch' | 'baseCommit' | 'git'>,
): Promise<string | undefined> {
  if (job.isolation !== 'worktree' || !job.repoDir || !job.branch || !job.baseCommit || !job.git)
    return undefined;
  const pinned = { repository: { gitDir: job.git.commonDir, workTree: job.repoDir } };
  const ref = `refs/heads/${job.branch}`;
  const tip = await resolveCommit(job.repoDir, ref, pinned);
  if (!tip || tip === job.baseCommit) return undefined;
  await git(job.repoDir, ['update-ref', ref, job.baseCommit, tip], pinned);
  return `the worker's own commits were taken off ${job.branch} (it was at ${tip.slice(0, 12)})`;
}

/**
 * Renames branch `from` to `to` in the repository (a worktree that has it checked out follows);
 * with `commonDir`, git is pointed at it rather than finding it from `repoDir`.
 */
export async function renameBranch(
  repoDir: string,
  from: string,
  to: string,
  commonDir?: string,
): Promise<void> {
  const pinned: GitOptions = commonDir
    ? { repository: { gitDir: commonDir, workTree: repoDir } }
    : {};
  await assertBranchName(repoDir, from);
  await assertBranchName(repoDir, to);
  await git(repoDir, ['branch', '-m', from, to], pinned);
}

/** Quotes a word for POSIX shells when it needs it, so instructions can be pasted. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * Commands the supervisor runs to take the work: merge the branch, cherry-pick it, or apply the
 * patch. A task that started from the user's uncommitted changes has a base on no branch:
 * merging would also bring that snapshot in as a commit, so the patch comes first (it applies
 * onto those changes still in the checkout) and the cherry-pick copies only the worker's commits.
 */
export function mergeInstructions(options: {
  repoDir: string;
  branch: string;
  baseCommit: string;
  patchPath: string;
  isFromUncommitted?: boolean;
}): string {
  const inRepo = `git -C ${shellWord(options.repoDir)}`;
  const apply = `${inRepo} apply ${shellWord(options.patchPath)}`;
  const pick = `${inRepo} cherry-pick ${shellWord(`${options.baseCommit}..${options.branch}`)}`;
  if (options.isFromUncommitted) {
    return [
      `The task started from your uncommitted changes (base ${options.baseCommit.slice(0, 12)}, on no branch); the patch holds only the worker's changes.`,
      `Apply the patch:     ${apply}`,
      `or, once your changes are committed, copy its commits: ${pick}`,
    ].join('\n');
  }
  return [
    `Merge the branch:    ${inRepo} merge --no-ff ${shellWord(options.branch)}`,
    `or copy its commits: ${pick}`,
    `or apply the patch:  ${apply}`,
  ].join('\n');
}

/**
 * Removes the task's folder on its runner (nothing for a task without one). Resolves with why
 * it could not be removed, or undefined.
 */
export async function removeRunnerFolder(
  dataHome: string,
  job: Pick<JobFile, 'runner'>,
): Promise<string | undefined> {
  if (!job.runner) return undefined;
  try {
    await removeRemoteTask({ runner: job.runner, dataHome, env: process.env });
    return undefined;
  } catch (error) {
    return errorMessage(error);
  }
}
