import { copyFile, mkdir, mkdtemp, realpath, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
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
} from './git.ts';
import { errorMessage } from '../util/user-error.ts';

export type { ChangeFacts, FileChange } from './git.ts';

export async function isGitRepository(dir: string): Promise<boolean> {
  return (await tryGit(dir, ['rev-parse', '--is-inside-work-tree']))?.trim() === 'true';
}

/** Top of the repository containing dir (realpath). */
export async function repositoryRoot(dir: string): Promise<string> {
  return realpath((await git(dir, ['rev-parse', '--show-toplevel'])).trim());
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
}): Promise<{ path: string; branch: string; baseCommit: string }> {
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
  return { path: await realpath(path), branch, baseCommit };
}

/**
 * Salvages everything the worker did in the worktree: uncommitted changes (untracked files
 * included, ignored files not) become one commit on the task branch, commits the worker made
 * itself are kept. Then writes the binary patch baseCommit..HEAD to patchPath. Idempotent.
 * `commit` is the tip of the work (HEAD), undefined while HEAD is still baseCommit.
 */
export async function snapshotWork(options: {
  worktreePath: string;
  baseCommit: string;
  message: string;
  patchPath: string;
}): Promise<ChangeFacts & { commit: string | undefined; patchBytes: number }> {
  const { worktreePath: cwd, baseCommit, patchPath } = options;
  await git(cwd, ['add', '--all']);
  const staged = await git(cwd, ['diff', '--cached', '--name-only', '-z']);
  if (staged !== '') {
    const message = options.message.trim() || 'delegate: work of the worker';
    await git(cwd, ['commit', '--quiet', '--no-verify', '-m', message], { env: workerIdentity() });
  }
  const head = await resolveCommit(cwd, 'HEAD');
  const revisions = [baseCommit, 'HEAD'];
  await mkdir(dirname(patchPath), { recursive: true });
  await writePatch(cwd, revisions, patchPath);
  const facts = await diffFacts(cwd, revisions);
  const { size } = await stat(patchPath);
  return { commit: head === baseCommit ? undefined : head, ...facts, patchBytes: size };
}

/**
 * The same facts for a plain directory task (isolation none): undefined outside a repository;
 * in one, files changed vs HEAD (untracked files as additions) and a diffstat, without
 * committing or touching the index the user works with.
 */
export async function describeChanges(dir: string): Promise<ChangeFacts | undefined> {
  if (!(await isGitRepository(dir))) return undefined;
  const root = await repositoryRoot(dir);
  const base = await headOrEmptyTree(root);
  return withScratchIndex(root, (env) => diffFacts(root, [base], { env }));
}

/**
 * The text diff of the working tree of `dir` (untracked files included, ignored ones not)
 * against `base` (default HEAD), without committing or touching the real index; undefined
 * outside a repository.
 */
export async function workingDiff(dir: string, base?: string): Promise<string | undefined> {
  if (!(await isGitRepository(dir))) return undefined;
  const root = await repositoryRoot(dir);
  const from = base ?? (await headOrEmptyTree(root));
  return withScratchIndex(root, (env) => git(root, ['diff', ...PLAIN_DIFF, from, '--'], { env }));
}

async function headOrEmptyTree(root: string): Promise<string> {
  return (
    (await resolveCommit(root, 'HEAD')) ??
    (await git(root, ['hash-object', '-t', 'tree', '/dev/null'])).trim()
  );
}

/** Runs `action` with a copy of the repository's index where every file is intended-to-add. */
async function withScratchIndex<T>(
  root: string,
  action: (env: Record<string, string>) => Promise<T>,
): Promise<T> {
  const index = resolve(root, (await git(root, ['rev-parse', '--git-path', 'index'])).trim());
  const scratch = await mkdtemp(join(tmpdir(), 'delegate-index-'));
  const env = { GIT_INDEX_FILE: join(scratch, 'index') };
  try {
    await copyFile(index, env.GIT_INDEX_FILE).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
    // Intent-to-add makes untracked files show up in the diff without storing their content.
    await git(root, ['add', '--all', '--intent-to-add'], { env });
    return await action(env);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** A path as git lists it: symlinks resolved as far as the path exists. */
async function canonicalPath(path: string): Promise<string> {
  const absolute = resolve(path);
  const real = await realpath(absolute).catch(() => undefined);
  if (real) return real;
  const parent = await realpath(dirname(absolute)).catch(() => dirname(absolute));
  return join(parent, basename(absolute));
}

async function removeRegisteredWorktree(root: string, worktreePath: string): Promise<boolean> {
  const listing = await git(root, ['worktree', 'list', '--porcelain']);
  const registered = listing
    .split('\n')
    .filter((line) => line.startsWith('worktree '))
    .map((line) => line.slice('worktree '.length))
    .slice(1); // The first entry is the main working tree, which is never removed.
  const wanted = await canonicalPath(worktreePath);
  for (const entry of registered) {
    if ((await canonicalPath(entry)) !== wanted) continue;
    // Twice --force: also removes a locked worktree; a missing directory is unregistered.
    await git(root, ['worktree', 'remove', '--force', '--force', entry]);
    return true;
  }
  return false;
}

async function settleBranch(
  root: string,
  branch: string,
  keepBranch: boolean,
): Promise<{ branchDeleted: boolean; note?: string }> {
  const tip = await resolveCommit(root, `refs/heads/${branch}`);
  if (!tip) return { branchDeleted: false };
  if (keepBranch) return { branchDeleted: false, note: `Branch ${branch} kept as asked.` };
  const isMerged = (await tryGit(root, ['merge-base', '--is-ancestor', tip, 'HEAD'])) !== undefined;
  if (!isMerged) {
    const note = `Branch ${branch} kept: it has commits not merged into the current HEAD; delete it with \`git branch -D ${branch}\` once you no longer need them.`;
    return { branchDeleted: false, note };
  }
  try {
    // `branch -D` (not update-ref) refuses a branch still checked out somewhere.
    await git(root, ['branch', '-D', branch]);
    return { branchDeleted: true };
  } catch (error) {
    return { branchDeleted: false, note: `Branch ${branch} kept: ${errorMessage(error)}` };
  }
}

/**
 * Removes the worktree (force) and its branch unless keepBranch or the branch has commits not
 * merged into the repository's current HEAD (then the branch is kept and the note says why).
 * Never touches any other branch. Idempotent: a worktree or branch already gone is fine;
 * `worktreeRemoved` says whether this call removed a registered worktree.
 */
export async function removeWorktree(options: {
  repoDir: string;
  worktreePath: string;
  branch: string;
  keepBranch?: boolean;
}): Promise<{ worktreeRemoved: boolean; branchDeleted: boolean; note?: string }> {
  const root = await repositoryRoot(options.repoDir);
  await assertBranchName(root, options.branch);
  const worktreeRemoved = await removeRegisteredWorktree(root, options.worktreePath);
  const branch = await settleBranch(root, options.branch, options.keepBranch ?? false);
  return { worktreeRemoved, ...branch };
}

/** Quotes a word for POSIX shells when it needs it, so instructions can be pasted. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** Commands the supervisor runs to take the work: merge the branch, cherry-pick it, or apply the patch. */
export function mergeInstructions(options: {
  repoDir: string;
  branch: string;
  baseCommit: string;
  patchPath: string;
}): string {
  const inRepo = `git -C ${shellWord(options.repoDir)}`;
  return [
    `Merge the branch:    ${inRepo} merge --no-ff ${shellWord(options.branch)}`,
    `or copy its commits: ${inRepo} cherry-pick ${shellWord(`${options.baseCommit}..${options.branch}`)}`,
    `or apply the patch:  ${inRepo} apply ${shellWord(options.patchPath)}`,
  ].join('\n');
}
