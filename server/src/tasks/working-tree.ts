import { copyFile, mkdtemp, rm, stat, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { git, resolveCommit, workerIdentity } from '../git/git.ts';
import type { PinnedRepository } from '../store/job-file.ts';

/** Options for git calls against a throwaway copy of the repository's index. */
export interface ScratchIndexOptions {
  repository: PinnedRepository;
  env: Record<string, string>;
}

/**
 * Runs `action` with a private copy of the repository's index (`GIT_INDEX_FILE` in a temp
 * folder): the index, stash list and working tree the user works with are never written.
 */
export async function withIndexCopy<T>(
  repository: PinnedRepository,
  action: (options: ScratchIndexOptions) => Promise<T>,
): Promise<T> {
  // What `git rev-parse --git-path index` answers: git runs without GIT_INDEX_FILE (every
  // GIT_* variable is dropped, git.ts), so the index is the one in the pinned git directory.
  const index = join(repository.gitDir, 'index');
  const scratch = await mkdtemp(join(tmpdir(), 'delegate-index-'));
  const options = { repository, env: { GIT_INDEX_FILE: join(scratch, 'index') } };
  try {
    await copyIndex(index, options.env.GIT_INDEX_FILE);
    return await action(options);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * A copy of the index that git reads as it reads the original. Its modification time is the
 * original's: git trusts a file's recorded size and time only when the file is older than the
 * index, so a copy with a newer time would take a file rewritten at the same size in the same
 * second as the index ("racily clean") for unchanged, and a diff would miss real work.
 */
async function copyIndex(index: string, copy: string): Promise<void> {
  try {
    await copyFile(index, copy);
    const { atime, mtime } = await stat(index);
    await utimes(copy, atime, mtime);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

/** What the user sees, as a commit on top of HEAD, and how many files differ from HEAD. */
export interface WorkingTreeSnapshot {
  commit: string;
  head: string;
  files: number;
}

/**
 * A commit whose tree is the checkout as the user sees it (tracked changes, staged or not, and
 * untracked files that are not ignored), its parent HEAD; undefined when that is HEAD's tree or
 * HEAD has no commit. Only objects are written: no ref, index, stash entry or file changes.
 */
export async function snapshotWorkingTree(
  repository: PinnedRepository & { startCommit?: string },
): Promise<WorkingTreeSnapshot | undefined> {
  const cwd = repository.workTree;
  // HEAD as just recorded (recordGit), else asked.
  const head = repository.startCommit ?? (await resolveCommit(cwd, 'HEAD', { repository }));
  if (!head) return undefined;
  return withIndexCopy(repository, async (options) => {
    await git(cwd, ['add', '--all'], options);
    // The staged copy against HEAD: nothing differs (the usual case) ends it here.
    const names = await git(
      cwd,
      ['diff-index', '--cached', '-r', '--name-only', '-z', head],
      options,
    );
    const files = names.split('\0').filter((name) => name !== '').length;
    if (files === 0) return undefined;
    const tree = (await git(cwd, ['write-tree'], options)).trim();
    const message = 'delegate: your uncommitted changes when the task started';
    const commit = await git(cwd, ['commit-tree', tree, '-p', head, '-m', message], {
      ...options,
      env: { ...options.env, ...workerIdentity() },
    });
    return { commit: commit.trim(), head, files };
  });
}
