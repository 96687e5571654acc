import { readdirSync, statSync, type BigIntStats } from 'node:fs';

/**
 * A file's identity: inode and modification time (ns). Replacing a file (write and rename)
 * changes it; for the held files' versions (file-lock.ts) and caches of what was read from a file.
 */
export const fingerprintOfStats = (stats: BigIntStats) => `${stats.ino}:${stats.mtimeNs}`;

/**
 * How long after a change a file's times can be trusted to show the next one: a change within
 * the same tick of the clock that stamps them can leave them as they were. Linux stamps from a
 * clock that moves every 1 to 10 ms, so a time with a fraction of a second settles after
 * FINE_SETTLE_MS; whole seconds (ext3, FAT's 2-second steps, some network file systems) after
 * COARSE_SETTLE_MS.
 */
export const FINE_SETTLE_MS = 100;
export const COARSE_SETTLE_MS = 2_000;

/**
 * What a cache of a file's content (or a folder's listing) may be keyed on, as git trusts its
 * index: device, inode, size, change and modification times (ns), or `absent`. Undefined while
 * it changed too recently to be trusted (see FINE_SETTLE_MS), or when it is not of `kind`: what
 * is read now must not be reused. Take it before reading: a change after it shows in the next.
 */
export function settledFingerprint(
  path: string,
  kind: 'file' | 'folder' = 'file',
  nowMs = Date.now(),
): string | undefined {
  const version = fileVersion(path, kind, nowMs);
  return version?.isSettled ? version.fingerprint : undefined;
}

/**
 * The fingerprint of {@link settledFingerprint}, settled or not: undefined only when the path
 * cannot be looked at or is not of `kind`.
 */
export function fileVersion(
  path: string,
  kind: 'file' | 'folder' = 'file',
  nowMs = Date.now(),
): { fingerprint: string; isSettled: boolean } | undefined {
  let stats: BigIntStats | undefined;
  try {
    stats = statSync(path, { bigint: true, throwIfNoEntry: false });
  } catch {
    return undefined;
  }
  if (!stats) return { fingerprint: 'absent', isSettled: true };
  if (kind === 'file' ? !stats.isFile() : !stats.isDirectory()) return undefined;
  const changedNs = stats.ctimeNs > stats.mtimeNs ? stats.ctimeNs : stats.mtimeNs;
  return {
    fingerprint: `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`,
    isSettled: hasSettled(changedNs, nowMs),
  };
}

/** Whether a change stamped `changedNs` is long enough ago (a time ahead of this clock is not). */
export function hasSettled(changedNs: bigint, nowMs: number): boolean {
  const settleMs = changedNs % 1_000_000_000n === 0n ? COARSE_SETTLE_MS : FINE_SETTLE_MS;
  return nowMs - Number(changedNs / 1_000_000n) >= settleMs;
}

/**
 * What was read under a key, with the fingerprint of what it was read from; `isOwnWrite` when
 * this process wrote it and kept what it wrote (job-store.ts).
 */
export type KeptReads<T> = Map<string, { fingerprint: string; value: T; isOwnWrite?: boolean }>;

/**
 * What `read` returns, or what it returned last for `key` while `fingerprint` (taken before
 * reading: see `settledFingerprint`) is unchanged. An unsettled one reads anew and keeps nothing.
 */
export function readUnlessChanged<T>(
  kept: KeptReads<T>,
  key: string,
  fingerprint: string | undefined,
  read: () => T,
): T {
  const last = kept.get(key);
  if (fingerprint !== undefined && last?.fingerprint === fingerprint) return last.value;
  kept.delete(key);
  const value = read();
  if (fingerprint !== undefined) kept.set(key, { fingerprint, value });
  return value;
}

const listings: KeptReads<readonly string[]> = new Map();

/**
 * The names in a folder, sorted (none when it cannot be listed), listed again only when the
 * folder changed (an entry added, removed or renamed changes its times): a stat instead of a
 * listing while nothing came or went. The result is shared: do not change it.
 */
export function folderNames(path: string): readonly string[] {
  return folderLook(path).names;
}

/**
 * {@link folderNames}, with the settled fingerprint the listing was checked against (undefined
 * while the folder is settling): while it stays the same, no entry of the folder was added,
 * removed or replaced, so a file found in it is still that very file.
 */
export function folderLook(path: string): { names: readonly string[]; fingerprint?: string } {
  const fingerprint = settledFingerprint(path, 'folder');
  const names = readUnlessChanged(listings, path, fingerprint, () => {
    try {
      return readdirSync(path).sort();
    } catch {
      return [];
    }
  });
  return fingerprint === undefined ? { names } : { names, fingerprint };
}
