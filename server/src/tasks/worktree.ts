import { mkdir, readdir, readFile, realpath, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import {
  diffFacts,
  git,
  PLAIN_DIFF,
  resolveCommit,
  tryGit,
  workerIdentity,
  writePatch,
  type ChangeFacts,
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

/**
 * Records where the repository containing dir keeps its metadata (real paths). `head`, when the
 * caller knows HEAD's commit already (a worktree it just added at that commit), saves asking.
 */
export async function recordGit(dir: string, head?: string): Promise<RecordedGit> {
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
  const startCommit = head ?? (await resolveCommit(dir, 'HEAD', { repository: recorded }));
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
