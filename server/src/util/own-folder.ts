import { lstatSync, type Stats } from 'node:fs';

/** The user this process runs as; undefined where the platform has no uids (Windows). */
export function currentUserId(): number | undefined {
  return process.getuid?.();
}

/** Whether `info` (from lstat) belongs to the user this process runs as. */
export function isOwnedByUser(info: Stats): boolean {
  const uid = currentUserId();
  return uid === undefined || info.uid === uid;
}

/**
 * Why `dir` is not a real folder of the user's own — a symbolic link (which would send writes,
 * reads and removals somewhere else), not a folder, or another user's — in words that follow
 * its path; undefined when it is one, or when it does not exist.
 */
export function ownFolderProblem(dir: string): string | undefined {
  const info = lstatSync(dir, { throwIfNoEntry: false });
  if (!info) return undefined;
  if (info.isSymbolicLink()) return 'is a symbolic link';
  if (!info.isDirectory()) return 'is not a folder';
  if (!isOwnedByUser(info)) return `belongs to another user (uid ${info.uid})`;
  return undefined;
}
