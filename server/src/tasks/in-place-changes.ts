/**
 * What an in-place task changed, measured on disk: the workdir now against its snapshot from
 * the start (in-place-snapshot.ts) — added, modified (content, mode or a link's target),
 * deleted and type-changed (file ↔ folder ↔ symlink) entries, ignored files included. git is
 * not asked: it misses ignored files and mixes in the user's own uncommitted changes.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../util/atomic-write.ts';
import {
  snapshotPaths,
  walkTree,
  type SnapshotManifest,
  type TreeEntry,
} from './in-place-snapshot.ts';

/** The end's walk stops here: a worker that made more than this is reported as such. */
const END_WALK_LIMIT = 200_000;
/** A file whose status changed this close to the snapshot may have changed again unseen. */
const RACY_MS = 2_000;

/** An entry as the task left it, with its content's digest when it is a file. */
export type EndEntry = TreeEntry & { sha256?: string };

/** One change on disk. */
export interface InPlaceChange {
  /** A added, M modified (content, mode or link target), D deleted, T type changed. */
  status: 'A' | 'M' | 'D' | 'T';
  path: string;
  /** What changed besides content: `mode 644 → 755`, `file → symlink`, `link → x`. */
  note?: string;
  /** The entry at the start (absent for A) and at the task's end (absent for D). */
  before?: TreeEntry;
  after?: EndEntry;
}

/** Every change, and whether the walk stopped before it saw the whole workdir. */
export interface InPlaceChanges {
  changes: InPlaceChange[];
  isCut: boolean;
}

/** Where the end's changes are kept for the restore: `changes.json` beside the manifest. */
export const changesPath = (snapshotDir: string) => join(snapshotDir, 'changes.json');

export async function readManifest(snapshotDir: string): Promise<SnapshotManifest> {
  return JSON.parse(
    await readFile(snapshotPaths(snapshotDir).manifest, 'utf8'),
  ) as SnapshotManifest;
}

/** Compares the workdir with its snapshot, and records the changes for a later restore. */
export async function measureChanges(snapshotDir: string): Promise<InPlaceChanges> {
  const manifest = await readManifest(snapshotDir);
  // Left out as at the start: the same folders are compared.
  const now = await walkTree(manifest.workdir, manifest.skips ?? {}, END_WALK_LIMIT);
  const before = new Map(manifest.entries.map((entry) => [entry.path, entry]));
  const after = new Map(now.entries.map((entry) => [entry.path, entry]));
  const paths = [...new Set([...before.keys(), ...after.keys()])].sort();
  const changes: InPlaceChange[] = [];
  for (const path of paths) {
    // A cut walk did not see everything: an entry it missed is not known to be gone.
    if (!after.has(path) && now.isCut) continue;
    const change = await compareEntry(manifest, before.get(path), after.get(path), snapshotDir);
    if (change) changes.push(change);
  }
  await writeFileAtomic(changesPath(snapshotDir), JSON.stringify(changes));
  return { changes, isCut: now.isCut };
}

async function compareEntry(
  manifest: SnapshotManifest,
  before: TreeEntry | undefined,
  after: TreeEntry | undefined,
  snapshotDir: string,
): Promise<InPlaceChange | undefined> {
  const path = (before ?? after)!.path;
  const end = after ? await withDigest(manifest.workdir, after) : undefined;
  if (!before) return { status: 'A', path, after: end! };
  if (!after) return { status: 'D', path, before };
  if (before.type !== after.type) {
    return { status: 'T', path, note: `${before.type} → ${after.type}`, before, after: end! };
  }
  const notes: string[] = [];
  if (before.mode !== after.mode && before.type !== 'symlink') {
    notes.push(`mode ${octal(before.mode)} → ${octal(after.mode)}`);
  }
  if (before.type === 'symlink' && before.target !== after.target) {
    notes.push(`link → ${after.target}`);
  }
  const isEdited =
    before.type === 'file' &&
    !(await hasSameContent(manifest, before, after, snapshotPaths(snapshotDir).files));
  if (!isEdited && notes.length === 0) return undefined;
  return {
    status: 'M',
    path,
    ...(notes.length ? { note: notes.join(', ') } : {}),
    before,
    after: end!,
  };
}

const octal = (mode: number) => (mode & 0o7777).toString(8);

async function hasSameContent(
  manifest: SnapshotManifest,
  before: TreeEntry,
  after: TreeEntry,
  files: string,
): Promise<boolean> {
  if (before.size !== after.size) return false;
  const isSameStatus =
    before.mtimeNs === after.mtimeNs &&
    before.ctimeNs === after.ctimeNs &&
    before.ino === after.ino;
  const isRacy = Number(BigInt(before.ctimeNs) / 1_000_000n) >= manifest.takenAtMs - RACY_MS;
  if (isSameStatus && !isRacy) return true;
  return sameBytes(join(manifest.workdir, after.path), join(files, before.path));
}

/** Whether two files hold the same bytes, read side by side. */
export async function sameBytes(one: string, other: string): Promise<boolean> {
  const [first, second] = [await open(one, 'r'), await open(other, 'r')];
  try {
    const size = 64 * 1024;
    const [a, b] = [Buffer.alloc(size), Buffer.alloc(size)];
    for (;;) {
      const [readA, readB] = [await first.read(a, 0, size), await second.read(b, 0, size)];
      if (readA.bytesRead !== readB.bytesRead) return false;
      if (readA.bytesRead === 0) return true;
      if (!a.subarray(0, readA.bytesRead).equals(b.subarray(0, readB.bytesRead))) return false;
    }
  } finally {
    await Promise.all([first.close(), second.close()]);
  }
}

/** The entry with its content's digest when it is a file (for telling later edits apart). */
async function withDigest(workdir: string, entry: TreeEntry): Promise<EndEntry> {
  return entry.type === 'file'
    ? { ...entry, sha256: await digestOf(join(workdir, entry.path)) }
    : entry;
}

export async function digestOf(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * The changes as the result lists them: a folder only when nothing under it is listed, with a
 * trailing `/`; the note in brackets.
 */
export function listedChanges(
  changes: readonly InPlaceChange[],
): Array<{ status: string; path: string }> {
  const isFolder = (change: InPlaceChange) => (change.after ?? change.before)?.type === 'dir';
  return changes
    .filter(
      (change) =>
        !isFolder(change) || !changes.some((other) => other.path.startsWith(`${change.path}/`)),
    )
    .map((change) => ({
      status: change.status,
      path: `${change.path}${isFolder(change) ? '/' : ''}${change.note ? ` (${change.note})` : ''}`,
    }));
}
