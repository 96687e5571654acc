/**
 * The snapshot of an in-place task's folder (`isolation: "none"`): before the worker starts,
 * every file, folder and symlink under the workdir is recorded and every file's content copied
 * into the job folder. The task's end compares the disk with it (in-place-changes.ts) and
 * `task_cleanup` with `discard` puts it back (in-place-restore.ts). Hard links would not do: a
 * worker editing a file in place would edit the "snapshot" too.
 */
import { constants, realpathSync } from 'node:fs';
import { copyFile, lstat, mkdir, readdir, readlink } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { writeFileAtomic } from '../util/atomic-write.ts';
import { formatBytes } from '../util/format-bytes.ts';
import { UserError } from '../util/user-error.ts';
import type { InPlaceSnapshot } from '../store/job-file.ts';
import { plural } from '../util/plural.ts';

/** At most this many files, folders and links are snapshotted… */
export const MAX_SNAPSHOT_ENTRIES = 20_000;
/** …holding at most this many bytes. */
export const MAX_SNAPSHOT_BYTES = 512 * 1024 * 1024;

/** One entry of the workdir as it was (or is): what the comparison and the restore need. */
export interface TreeEntry {
  /** Relative to the workdir, `/`-separated. */
  path: string;
  type: 'file' | 'dir' | 'symlink' | 'other';
  /** Permission bits. */
  mode: number;
  size: number;
  mtimeNs: string;
  ctimeNs: string;
  ino: string;
  /** A symlink's target. */
  target?: string;
}

/** What a snapshot leaves out besides git metadata: absolute path → why (in words). */
export type SnapshotSkips = Readonly<Record<string, string>>;

/** `manifest.json` of a snapshot. */
export interface SnapshotManifest {
  workdir: string;
  takenAtMs: number;
  entries: TreeEntry[];
  /** Left out at the start, and so at the end too (absent in snapshots from before it was kept). */
  skips?: SnapshotSkips;
}

/** What a walk of the workdir found, and what it left out (and why). */
export interface WalkedTree {
  entries: TreeEntry[];
  bytes: number;
  leftOut: string[];
  /** The walk stopped at its limit: `entries` is not the whole tree. */
  isCut: boolean;
}

/**
 * Every entry under `workdir` (symlinks not followed), without git metadata (`.git` at any
 * depth: workers cannot write it, and the task's end checks it) and without `skips` (the data
 * home when it lies inside, a repository's ignored folders). Stops past `limit` entries.
 */
export async function walkTree(
  workdir: string,
  skips: SnapshotSkips,
  limit: number,
): Promise<WalkedTree> {
  const tree: WalkedTree = { entries: [], bytes: 0, leftOut: [], isCut: false };
  const folders = [workdir];
  for (let folder = folders.pop(); folder !== undefined; folder = folders.pop()) {
    for (const name of (await ifThere(readdir(folder))) ?? []) {
      const absolute = join(folder, name);
      const path = relative(workdir, absolute).split(sep).join('/');
      const skipped = name === '.git' ? 'git metadata' : skips[absolute];
      if (skipped) {
        tree.leftOut.push(`${path} (${skipped})`);
        continue;
      }
      if (tree.entries.length >= limit) {
        tree.isCut = true;
        return tree;
      }
      const entry = await ifThere(entryOf(absolute, path));
      if (!entry) continue;
      tree.entries.push(entry);
      if (entry.type === 'file') tree.bytes += entry.size;
      if (entry.type === 'dir') folders.push(absolute);
    }
  }
  tree.entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return tree;
}

/** What `reading` gives; undefined for an entry deleted while the walk went by. */
async function ifThere<T>(reading: Promise<T>): Promise<T | undefined> {
  try {
    return await reading;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** The entry at `absolute` as it is now. */
export async function entryOf(absolute: string, path: string): Promise<TreeEntry> {
  const stats = await lstat(absolute, { bigint: true });
  const type = stats.isFile()
    ? 'file'
    : stats.isDirectory()
      ? 'dir'
      : stats.isSymbolicLink()
        ? 'symlink'
        : 'other';
  return {
    path,
    type,
    mode: Number(stats.mode & 0o7777n),
    size: type === 'file' ? Number(stats.size) : 0,
    mtimeNs: String(stats.mtimeNs),
    ctimeNs: String(stats.ctimeNs),
    ino: String(stats.ino),
    ...(type === 'symlink' ? { target: await readlink(absolute) } : {}),
  };
}

/** What every snapshot leaves out besides git metadata: the data home, when the workdir holds it. */
export function snapshotSkips(dataHome: string): SnapshotSkips {
  try {
    return { [realpathSync(dataHome)]: "delegate's data" };
  } catch {
    return {};
  }
}

/** Where a snapshot keeps its manifest and its copies. */
export const snapshotPaths = (dir: string) => ({
  manifest: join(dir, 'manifest.json'),
  files: join(dir, 'files'),
});

/**
 * Snapshots `workdir` into `dir` (a folder of the job). Refuses, in one line that says what to
 * do, a folder too big to snapshot or a file it cannot read; what it leaves out is returned.
 */
export async function takeSnapshot(
  workdir: string,
  dir: string,
  skips: SnapshotSkips,
): Promise<InPlaceSnapshot> {
  const takenAtMs = Date.now();
  const tree = await walkTree(workdir, skips, MAX_SNAPSHOT_ENTRIES).catch((error: unknown) => {
    throw cannotSnapshot(workdir, error);
  });
  if (tree.isCut || tree.bytes > MAX_SNAPSHOT_BYTES) {
    const count = tree.isCut
      ? `more than ${MAX_SNAPSHOT_ENTRIES} files and folders`
      : plural(tree.entries.length, 'file or folder', 'files and folders');
    throw new UserError(
      `${workdir} is too big to snapshot before a task works in it in place: ${count}, ${formatBytes(tree.bytes)}${tree.isCut ? ' so far' : ''} (the limits are ${MAX_SNAPSHOT_ENTRIES} and ${formatBytes(MAX_SNAPSHOT_BYTES)}). Pass a smaller workdir, or make it a git repository and leave isolation out (a worktree needs no snapshot).`,
    );
  }
  const { manifest, files } = snapshotPaths(dir);
  await mkdir(files, { recursive: true });
  for (const entry of tree.entries) await copyEntry(workdir, files, entry);
  const content: SnapshotManifest = { workdir, takenAtMs, entries: tree.entries, skips };
  await writeFileAtomic(manifest, JSON.stringify(content));
  return { dir, entries: tree.entries.length, bytes: tree.bytes, leftOut: tree.leftOut };
}

async function copyEntry(workdir: string, files: string, entry: TreeEntry): Promise<void> {
  const target = join(files, entry.path);
  try {
    if (entry.type === 'dir') await mkdir(target, { recursive: true });
    // A copy-on-write clone where the file system has them, else a full copy: never a link.
    if (entry.type === 'file') {
      await copyFile(join(workdir, entry.path), target, constants.COPYFILE_FICLONE);
    }
  } catch (error) {
    throw cannotSnapshot(join(workdir, entry.path), error);
  }
}

function cannotSnapshot(path: string, error: unknown): UserError {
  const { code, path: where = path } = error as NodeJS.ErrnoException;
  return new UserError(
    `Cannot snapshot ${where} (${code ?? String(error)}) before the task works in place: make it readable, or pass a workdir without it.`,
  );
}
