import { randomBytes } from 'node:crypto';
import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { outputsDir } from '../config/paths.ts';
import { writeSecretFileSync } from '../util/secret-file.ts';

/** Saved outputs kept at most: the newest this many… */
export const KEEP_OUTPUTS = 100;
/** …within this many bytes in all… */
export const KEEP_OUTPUT_BYTES = 200 * 1024 * 1024;
/** …and none older than this. */
export const KEEP_OUTPUT_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * Saves a tool's full output under the data home, readable only by its owner (outputs can
 * hold anything the user's commands print), and prunes older outputs past the limits.
 * Returns the saved file's path.
 */
export function saveOutput(dataHome: string, tool: string, text: string, now = new Date()): string {
  const dir = outputsDir(dataHome);
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  const name = `${stamp}-${tool.replace(/[^A-Za-z0-9_-]+/g, '_').slice(0, 40)}-${randomBytes(3).toString('hex')}.txt`;
  const path = join(dir, name);
  writeSecretFileSync(path, text);
  pruneOutputs(dir, now.getTime(), path);
  return path;
}

/** Removes the oldest saved outputs past the count, size or age limits; never `keep`. */
export function pruneOutputs(dir: string, nowMs: number, keep?: string): void {
  const files = readdirSync(dir)
    .filter((name) => name.endsWith('.txt'))
    .flatMap((name) => {
      const path = join(dir, name);
      const stats = statSync(path, { throwIfNoEntry: false });
      return stats?.isFile() ? [{ path, bytes: stats.size, mtimeMs: stats.mtimeMs }] : [];
    })
    .sort((a, b) => b.mtimeMs - a.mtimeMs || b.path.localeCompare(a.path));
  let count = 0;
  let bytes = 0;
  for (const file of files) {
    count += 1;
    bytes += file.bytes;
    const isOld = nowMs - file.mtimeMs > KEEP_OUTPUT_MS;
    if (file.path !== keep && (count > KEEP_OUTPUTS || bytes > KEEP_OUTPUT_BYTES || isOld)) {
      rmSync(file.path, { force: true });
    }
  }
}
