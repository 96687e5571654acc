/**
 * Adding and removing a task's worktree and branch. Every change to a repository's worktrees or
 * task branches runs under that repository's lock (see repository-lock.ts), so tasks started,
 * ended and cleaned up at once, from any number of processes, never see each other half-made.
 */
import { mkdir, realpath, rm } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { assertBranchName, git, resolveCommit, tryGit, type GitOptions } from '../git/git.ts';
import { errorMessage, UserError } from '../util/user-error.ts';
import { withRepositoryLock } from './repository-lock.ts';
import { recordGit, repositoryRoot } from './worktree.ts';
import type { JobFile, RecordedGit } from '../store/job-file.ts';

/** The worktree's absolute path with symlinks in its parent resolved; parents are created. */
async function prepareWorktreePath(root: string, worktreePath: string): Promise<string> {
  const parent = dirname(resolve(worktreePath));
  await mkdir(parent, { recursive: true });
  const path = join(await realpath(parent), basename(worktreePath));
  const fromRoot = relative(root, path);
  if (fromRoot === '' || (!fromRoot.startsWith('..') && !isAbsolute(fromRoot))) {
    throw new UserError(
      `Worktree path ${path} is inside the repository ${root}: task worktrees live in the data home, so set DELEGATE_HOME to a folder outside the repository.`,
    );
  }
  return path;
}

/** The common git directory of the repository at `root` (real path): the key of its lock. */
async function commonDirOf(root: string, options: GitOptions = {}): Promise<string> {
  const common = (await git(root, ['rev-parse', '--git-common-dir'], options)).trim();
  return realpath(resolve(root, common));
}

/**
 * Creates a worktree at worktreePath (outside the repository; parent dirs created) on a NEW
 * branch `branch` from baseRef (default HEAD of the repository; a branch name, tag or commit).
 * Only registering it holds the repository's lock; its files are checked out after. Refuses
 * (UserError) when the branch exists or git cannot make it, leaving nothing of it behind.
 */
export async function createWorktree(options: {
  dataHome: string;
  repoDir: string;
  worktreePath: string;
  branch: string;
  baseRef?: string;
  /**
   * `repoDir`'s metadata as the caller just recorded it at its top (`recordGit`): saves asking
   * git again for the top and the common directory.
   */
  repository?: RecordedGit;
  /** The base as a commit the caller resolved in this repository just now (instead of `baseRef`). */
  baseCommit?: string;
}): Promise<{ path: string; branch: string; baseCommit: string; git: RecordedGit }> {
  const { dataHome, branch, baseRef = 'HEAD', repository } = options;
  const root = repository?.workTree ?? (await repositoryRoot(options.repoDir));
  await assertBranchName(root, branch);
  const baseCommit = options.baseCommit ?? (await resolveCommit(root, baseRef));
  if (!baseCommit) {
    throw new Error(`Base ref "${baseRef}" does not name a commit in ${root}.`);
  }
  const path = await prepareWorktreePath(root, options.worktreePath);
  const commonDir = repository?.commonDir ?? (await commonDirOf(root));
  // Checked before the lock: a task's branch is named by its reserved id, so none appears meanwhile.
  if (await resolveCommit(root, `refs/heads/${branch}`)) {
    throw new UserError(`Branch ${branch} already exists in ${root}; use another branch name.`);
  }
  const undo = () => withRepositoryLock(dataHome, commonDir, () => undoAdd(root, path, branch));
  await withRepositoryLock(dataHome, commonDir, async () => {
    const add = ['worktree', 'add', '--quiet', '--no-checkout', '-b', branch, path, baseCommit];
    await git(root, add).catch(async (error: unknown) => {
      await undoAdd(root, path, branch);
      throw couldNotMake(path, error);
    });
  });
  try {
    const created = await realpath(path);
    // The new worktree's HEAD is its new branch, at baseCommit.
    const recorded = await recordGit(created, baseCommit);
    // What `git worktree add` does after registering it, outside the lock; files are written by
    // as many processes as the machine has cores (git's parallel checkout, for a tree of 100
    // files or more): on a project of 2,000 files about 40 % less time here (BENCHMARKS.md).
    await git(created, ['-c', 'checkout.workers=0', 'reset', '--hard', '--quiet'], {
      repository: recorded,
    });
    return { path: created, branch, baseCommit, git: recorded };
  } catch (error) {
    await undo();
    throw couldNotMake(path, error);
  }
}

function couldNotMake(path: string, error: unknown): UserError {
  const why = errorMessage(error).replace(/\s*\n\s*/g, ' ');
  return new UserError(
    `Could not make the task's worktree ${path}: ${why}. Nothing of it was left; fix that and start the task again.`,
  );
}

/** Whatever a failed add left: its registration, its folder and its new branch. */
async function undoAdd(root: string, path: string, branch: string): Promise<void> {
  await removeRegisteredWorktree(root, path, {}).catch(() => false);
  await rm(path, { recursive: true, force: true });
  await tryGit(root, ['branch', '-D', branch]);
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

/** What becomes of the branch: kept (and why), already gone, or to be deleted. */
async function branchFate(
  root: string,
  branch: string,
  keepBranch: boolean,
  options: GitOptions & { snapshotBase?: string | undefined; discard?: boolean },
): Promise<{ branchDeleted: false; note?: string } | 'delete'> {
  const tip = await resolveCommit(root, `refs/heads/${branch}`, options);
  if (!tip) return { branchDeleted: false };
  if (keepBranch) return { branchDeleted: false, note: `Branch ${branch} kept as asked.` };
  // A branch still at the snapshot of the user's uncommitted changes holds no work of its own.
  const isMerged =
    options.discard === true ||
    tip === options.snapshotBase ||
    (await tryGit(root, ['merge-base', '--is-ancestor', tip, 'HEAD'], options)) !== undefined;
  if (isMerged) return 'delete';
  const note = `Branch ${branch} kept: it has commits not merged into the current HEAD; delete it with \`git branch -D ${branch}\` once you no longer need them.`;
  return { branchDeleted: false, note };
}

async function deleteBranch(
  root: string,
  branch: string,
  options: GitOptions,
): Promise<{ branchDeleted: boolean; note?: string }> {
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
  dataHome: string;
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
  const commonDir = options.commonDir ?? (await commonDirOf(root));
  // Decided before the lock (a cleanup runs once the task's commits are made): the lock is
  // held for the changes alone.
  const fate = await branchFate(root, options.branch, options.keepBranch ?? false, {
    ...pinned,
    snapshotBase: options.snapshotBase,
    discard: options.discardBranch ?? false,
  });
  return withRepositoryLock(options.dataHome, commonDir, async () => {
    const worktreeRemoved = await removeRegisteredWorktree(root, options.worktreePath, pinned);
    const branch = fate === 'delete' ? await deleteBranch(root, options.branch, pinned) : fate;
    return { worktreeRemoved, ...branch };
  });
}

/**
 * Renames branch `from` to `to` in the repository (a worktree that has it checked out follows);
 * with `commonDir`, git is pointed at it rather than finding it from `repoDir`.
 */
export async function renameBranch(options: {
  dataHome: string;
  repoDir: string;
  from: string;
  to: string;
  commonDir?: string;
}): Promise<void> {
  const { repoDir, from, to, commonDir } = options;
  const pinned: GitOptions = commonDir
    ? { repository: { gitDir: commonDir, workTree: repoDir } }
    : {};
  await assertBranchName(repoDir, from);
  await assertBranchName(repoDir, to);
  const lockKey = commonDir ?? (await commonDirOf(repoDir));
  await withRepositoryLock(options.dataHome, lockKey, () =>
    git(repoDir, ['branch', '-m', from, to], pinned),
  );
}

/**
 * Moves a task's branch back to its base when the worker committed on it itself: work that is
 * not salvaged (git metadata, a key) must not stay on the branch through the worker's own
 * commits either. Returns what it did, or undefined when the branch held none.
 */
export async function takeCommitsOffBranch(
  dataHome: string,
  job: Pick<JobFile, 'isolation' | 'repoDir' | 'branch' | 'baseCommit' | 'git'>,
): Promise<string | undefined> {
  const { repoDir, branch, baseCommit, git: recorded } = job;
  if (job.isolation !== 'worktree' || !repoDir || !branch || !baseCommit || !recorded)
    return undefined;
  const pinned = { repository: { gitDir: recorded.commonDir, workTree: repoDir } };
  const ref = `refs/heads/${branch}`;
  const tip = await resolveCommit(repoDir, ref, pinned);
  if (!tip || tip === baseCommit) return undefined;
  await withRepositoryLock(dataHome, recorded.commonDir, () =>
    git(repoDir, ['update-ref', ref, baseCommit, tip], pinned),
  );
  return `the worker's own commits were taken off ${branch} (it was at ${tip.slice(0, 12)})`;
}
