import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { LockTimeoutError, withFileLock } from '../util/file-lock.ts';
import { UserError } from '../util/user-error.ts';

/** A start or cleanup waits this long for another one's worktree change in the same repository. */
const REPOSITORY_LOCK_TIMEOUT_MS = 120_000;

/** The lock of one repository, named by its common git directory (shared by all its worktrees). */
export function repositoryLockPath(dataHome: string, commonDir: string): string {
  const key = createHash('sha256').update(commonDir).digest('hex').slice(0, 16);
  return join(dataHome, 'locks', `repository-${key}`);
}

/**
 * Runs `action` while no other process of this data home adds, removes or renames a worktree
 * or task branch of the repository whose common git directory is `commonDir`. git reads every
 * registered worktree when it adds one or deletes or renames a branch, and fails on one that
 * another git is still making ("failed to read .git/worktrees/<id>/commondir"); deleting a
 * packed branch takes `packed-refs.lock`, one writer at a time. A wait past two minutes is a
 * refusal that says so.
 */
export async function withRepositoryLock<T>(
  dataHome: string,
  commonDir: string,
  action: () => Promise<T>,
): Promise<T> {
  const path = repositoryLockPath(dataHome, commonDir);
  try {
    return await withFileLock(path, action, { timeoutMs: REPOSITORY_LOCK_TIMEOUT_MS });
  } catch (error) {
    if (!(error instanceof LockTimeoutError) || error.lockPath !== path) throw error;
    throw new UserError(
      `Another task start or cleanup in the repository at ${commonDir} has been changing its worktrees for ${error.timeoutMs / 1000} s (${error.holder}, lock ${path}); try again once it is done.`,
    );
  }
}
