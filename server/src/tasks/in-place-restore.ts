/**
 * Puts an in-place task's workdir back as it was at the start (`task_cleanup` with `discard`):
 * what the worker added goes, what it changed or deleted comes back from the snapshot. Only
 * the paths the task changed are touched, and only while each is still as the task left it: a
 * path changed again since (by you, or anything else) stops the restore before it begins,
 * unless forced.
 */
import { constants } from 'node:fs';
import {
  chmod,
  copyFile,
  mkdir,
  readdir,
  readFile,
  rename,
  rm,
  rmdir,
  symlink,
  utimes,
} from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { errorMessage, UserError } from '../util/user-error.ts';
import {
  changesPath,
  digestOf,
  readManifest,
  type EndEntry,
  type InPlaceChange,
} from './in-place-changes.ts';
import { entryOf, snapshotPaths, type TreeEntry } from './in-place-snapshot.ts';
import { plural } from '../util/plural.ts';

/** Paths named in a refusal at most; the rest are counted. */
const NAMED_PATHS = 5;

/**
 * Restores the changes recorded at the task's end. Refuses (nothing touched) when a changed
 * path was changed again since, unless `force`. Returns one line saying what it did.
 */
export async function restoreSnapshot(
  snapshotDir: string,
  options: { force: boolean; forceHow: string },
): Promise<string> {
  const { workdir } = await readManifest(snapshotDir).catch((error: unknown) => {
    throw new UserError(
      `Nothing was restored: the snapshot ${snapshotDir} cannot be read (${errorMessage(error)}); clean up without discard.`,
    );
  });
  const changes = await readChanges(snapshotDir);
  if (!options.force) {
    const changedSince = await changedSinceEnd(workdir, changes);
    if (changedSince.length > 0) {
      throw new UserError(
        `Not restored (nothing was touched): ${changedSince.length} of the paths the task changed in ${workdir} changed again after it ended: ${named(changedSince)}. ${options.forceHow} puts them back anyway (those later changes are lost); without discard, everything stays as it is.`,
      );
    }
  }
  const failures: string[] = [];
  const attempt = async (path: string, action: () => Promise<unknown>) => {
    await action().catch((error: unknown) => failures.push(`${path} (${errorMessage(error)})`));
  };
  const deepestFirst = [...changes].sort((a, b) => depth(b.path) - depth(a.path));
  for (const change of deepestFirst.filter((each) => each.after && each.status !== 'M')) {
    await attempt(change.path, () => removeEntry(workdir, change.after!, options.force));
  }
  const { files } = snapshotPaths(snapshotDir);
  for (const change of changes.filter((each) => each.before)) {
    await attempt(change.path, () => putBack(workdir, files, change.before!));
  }
  // Folders' own modes last: a folder restored read-only would refuse what goes into it.
  for (const change of deepestFirst.filter((each) => each.before?.type === 'dir')) {
    await attempt(change.path, () => chmod(join(workdir, change.path), change.before!.mode));
  }
  if (failures.length > 0) {
    throw new UserError(
      `Restored in part: ${plural(failures.length, 'path')} in ${workdir} could not be put back: ${named(failures)}. The snapshot is kept in ${snapshotDir}; fix those and discard again.`,
    );
  }
  const removed = changes.filter((change) => change.status === 'A').length;
  return `${workdir} put back as it was at the start (${removed} added entries removed, ${changes.length - removed} restored)`;
}

const depth = (path: string) => path.split('/').length;

/** The changes recorded at the task's end; a refusal when there are none to go by. */
async function readChanges(snapshotDir: string): Promise<InPlaceChange[]> {
  try {
    return JSON.parse(await readFile(changesPath(snapshotDir), 'utf8')) as InPlaceChange[];
  } catch (error) {
    throw new UserError(
      `Nothing was restored: the task's changes were never recorded against its snapshot (${errorMessage(error)}); its result says why. The snapshot is in ${snapshotDir}: copy back from files/ what you need, then clean up without discard.`,
    );
  }
}

function named(paths: readonly string[]): string {
  const more = paths.length - NAMED_PATHS;
  return `${paths.slice(0, NAMED_PATHS).join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
}

/** The changed paths that are no longer as the task left them. */
async function changedSinceEnd(workdir: string, changes: InPlaceChange[]): Promise<string[]> {
  const added = new Set(changes.filter((change) => change.after).map((change) => change.path));
  const changed: string[] = [];
  for (const change of changes) {
    const now = await entryOf(join(workdir, change.path), change.path).catch(() => undefined);
    if (!(await isAsLeft(workdir, now, change.after))) changed.push(change.path);
    // A folder the task made, now holding something it did not make, cannot simply go.
    if (change.after?.type === 'dir' && now?.type === 'dir' && change.status !== 'M') {
      for (const name of await readdir(join(workdir, change.path))) {
        const inside = `${change.path}/${name}`;
        if (!added.has(inside)) changed.push(`${inside} (added since)`);
      }
    }
  }
  return changed;
}

async function isAsLeft(
  workdir: string,
  now: TreeEntry | undefined,
  end: EndEntry | undefined,
): Promise<boolean> {
  if (!now || !end) return now === end;
  if (now.type !== end.type || now.mode !== end.mode) return false;
  if (now.type === 'symlink') return now.target === end.target;
  if (now.type !== 'file') return true;
  const isSameStatus =
    now.size === end.size && now.mtimeNs === end.mtimeNs && now.ctimeNs === end.ctimeNs;
  return isSameStatus || (await digestOf(join(workdir, now.path))) === end.sha256;
}

/** Removes what the task left at a path (a folder once what it held is gone, or whole when forced). */
async function removeEntry(workdir: string, end: EndEntry, force: boolean): Promise<void> {
  const path = join(workdir, end.path);
  if (end.type === 'dir' && !force) await rmdir(path);
  else await rm(path, { recursive: true, force: true });
}

/** Puts one entry of the snapshot back (a file's content, mode and time; a link; a folder). */
async function putBack(workdir: string, files: string, before: TreeEntry): Promise<void> {
  const path = join(workdir, before.path);
  if (before.type === 'dir') {
    await mkdir(path, { recursive: true });
    return;
  }
  if (before.type === 'symlink') {
    await rm(path, { recursive: true, force: true });
    await symlink(before.target!, path);
    return;
  }
  if (before.type !== 'file') {
    throw new Error(
      `a ${before.type === 'other' ? 'special file' : before.type} cannot be restored`,
    );
  }
  // A copy beside it, then a rename: a reader never sees half a file.
  const temp = join(dirname(path), `.delegate-restore-${process.pid}-${Date.now()}`);
  await copyFile(join(files, before.path), temp, constants.COPYFILE_FICLONE);
  await chmod(temp, before.mode);
  const seconds = Number(BigInt(before.mtimeNs) / 1_000_000n) / 1000;
  await utimes(temp, seconds, seconds);
  await rm(path, { recursive: true, force: true });
  await rename(temp, path);
}
