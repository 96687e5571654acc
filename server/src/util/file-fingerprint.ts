import type { BigIntStats } from 'node:fs';

/**
 * A file's identity: inode and modification time (ns). Replacing a file (write and rename)
 * changes it; for the held files' versions (file-lock.ts) and caches of what was read from a file.
 */
export const fingerprintOfStats = (stats: BigIntStats) => `${stats.ino}:${stats.mtimeNs}`;
