import { randomBytes } from 'node:crypto';
import { lstatSync, mkdirSync, readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { outputsDir } from '../config/paths.ts';
import { isOwnedByUser, ownFolderProblem } from '../util/own-folder.ts';
import { writeSecretFileSync } from '../util/secret-file.ts';

/** Saved outputs kept at most: the newest this many… */
export const KEEP_OUTPUTS = 100;
/** …within this many bytes in all… */
export const KEEP_OUTPUT_BYTES = 200 * 1024 * 1024;
/** …and none older than this. */
export const KEEP_OUTPUT_MS = 7 * 24 * 60 * 60 * 1000;

/** Where a full output went, or why it was not saved (nothing was written or removed). */
export type SavedOutput = { path: string } | { refusal: string };

/**
 * Saves a tool's full output under the data home, readable only by its owner (outputs can
 * hold anything the user's commands print), and prunes older outputs past the limits. Only in
 * a real `outputs` folder of the user's: a link there (to a folder of the user's own files, say)
 * or a folder of someone else's gets nothing written and nothing pruned, and says why.
 */
export function saveOutput(
  dataHome: string,
  tool: string,
  text: string,
  now = new Date(),
): SavedOutput {
  const dir = outputsDir(dataHome);
  const refusal = ownFolderRefusal(dataHome, dir);
  if (refusal) return { refusal };
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  const name = `${stamp}-${tool.replace(/[^A-Za-z0-9_-]+/g, '_').slice(0, 40)}-${randomBytes(3).toString('hex')}.txt`;
  const path = join(dir, name);
  writeSecretFileSync(path, text);
  pruneOutputs(dir, now.getTime(), path);
  return { path };
}

/** Why `dir` is not the user's own real folder (made 0700 when missing); undefined when it is. */
function ownFolderRefusal(dataHome: string, dir: string): string | undefined {
  mkdirSync(dataHome, { recursive: true, mode: 0o700 });
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const problem = ownFolderProblem(dir);
  return problem
    ? `${dir} ${problem}; replace it with a folder of your own (mkdir -m 700 ${dir}) to have big outputs saved there`
    : undefined;
}

/**
 * Removes the oldest saved outputs past the count, size or age limits; never `keep`. Only the
 * user's own regular files are counted or removed: a link is never followed, and a link, a
 * folder or another user's file is left where it is.
 */
export function pruneOutputs(dir: string, nowMs: number, keep?: string): void {
  const files = readdirSync(dir)
    .filter((name) => name.endsWith('.txt'))
    .flatMap((name) => {
      const path = join(dir, name);
      const stats = lstatSync(path, { throwIfNoEntry: false });
      return stats?.isFile() && isOwnedByUser(stats)
        ? [{ path, bytes: stats.size, mtimeMs: stats.mtimeMs }]
        : [];
    })
    .sort((a, b) => b.mtimeMs - a.mtimeMs || b.path.localeCompare(a.path));
  let count = 0;
  let bytes = 0;
  for (const file of files) {
    count += 1;
    bytes += file.bytes;
    const isOld = nowMs - file.mtimeMs > KEEP_OUTPUT_MS;
    if (file.path !== keep && (count > KEEP_OUTPUTS || bytes > KEEP_OUTPUT_BYTES || isOld)) {
      removeIfThere(file.path);
    }
  }
}

/** Another hook pruning at the same time may have removed it first. */
function removeIfThere(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
