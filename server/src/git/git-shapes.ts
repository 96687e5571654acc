import { createHash } from 'node:crypto';
import { lstat, readdir, readFile, readlink, rename } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { quotePath } from '../util/inert-text.ts';

/**
 * Paths git could later treat as a repository or as configuration, whatever they are named:
 *
 * - `dot-git`: an entry named `.git` (any case, with the characters HFS+ ignores), file or
 *   folder or link: a repository or a `gitdir:` pointer;
 * - `git-dir`: a folder shaped like a git directory, `HEAD` beside `objects`, `refs`,
 *   `commondir`, `config`, `gitdir` or `packed-refs` — git discovers a bare repository (or a
 *   worktree's admin folder) by that shape, under any name, and runs what its `config` says
 *   (`core.fsmonitor`) on a plain `git status` there;
 * - `gitmodules`: a `.gitmodules` file (submodule URLs and paths a later `git submodule` acts on).
 */
export type GitShapeKind = 'dot-git' | 'git-dir' | 'gitmodules';

export interface GitShape {
  /** Relative to the scanned folder. */
  path: string;
  kind: GitShapeKind;
  /** What git would act on in it (see {@link fingerprint}): a change of it is a change of the shape. */
  fingerprint: string;
}

/** Entries looked at in one scan; past it, the rest is unchecked (`isComplete: false`). */
const SCAN_LIMIT = 300_000;
/** Files hashed whole in a fingerprint; a larger one counts by size and time. */
const HASHED_BYTES = 1024 * 1024;

/** Characters HFS+ ignores in names, so `.g\u200cit` is `.git` there (as git's own is_hfs_dotgit). */
const IGNORED_BY_HFS = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g;

const plainName = (name: string) => name.replace(IGNORED_BY_HFS, '').toLowerCase();

/** Names beside `HEAD` that make a folder a git directory to git's discovery (or close to it). */
const GIT_DIR_MARKS = new Set(['objects', 'refs', 'commondir', 'config', 'gitdir', 'packed-refs']);

/** The kind of git directory `names` (one folder's entries) make, if they make one. */
function gitDirMarks(names: readonly string[]): string[] | undefined {
  const plain = names.map(plainName);
  if (!plain.includes('head')) return undefined;
  const marks = names.filter((_, index) => GIT_DIR_MARKS.has(plain[index]!));
  return marks.length > 0 ? ['HEAD', ...marks] : undefined;
}

/**
 * Every git-shaped path below `dir` (see {@link GitShapeKind}), sorted, except `excluded`
 * (absolute: the checkout's own `.git`). Links are not followed and nothing inside a shape is
 * searched: the shape is reported whole.
 */
export async function findGitShapes(
  dir: string,
  excluded?: string,
): Promise<{ shapes: GitShape[]; isComplete: boolean }> {
  const shapes: GitShape[] = [];
  const pending = [dir];
  let seen = 0;
  const add = async (path: string, kind: GitShapeKind) =>
    shapes.push({ path: relative(dir, path), kind, fingerprint: await fingerprint(path) });
  while (pending.length > 0) {
    const current = pending.pop()!;
    const entries = await readdir(current, { withFileTypes: true }).catch(() => []);
    seen += entries.length;
    if (seen > SCAN_LIMIT) return { shapes: sortShapes(shapes), isComplete: false };
    // The folder itself too: git checks a folder for a bare repository when it has no `.git`.
    if (gitDirMarks(entries.map((entry) => entry.name))) {
      await add(current, 'git-dir');
      if (current !== dir) continue;
    }
    for (const entry of entries) {
      const path = join(current, entry.name);
      const name = plainName(entry.name);
      if (name === '.git') {
        if (path !== excluded) await add(path, 'dot-git');
      } else if (name === '.gitmodules') {
        await add(path, 'gitmodules');
      } else if (entry.isDirectory()) {
        pending.push(path);
      }
    }
  }
  return { shapes: sortShapes(shapes), isComplete: true };
}

const sortShapes = (shapes: GitShape[]) =>
  shapes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));

/** Why a shape is git metadata, in words for a result line. */
export async function describeShape(dir: string, shape: GitShape): Promise<string> {
  // A name the worker chose: quoted as git quotes it (no raw newline reaches a result).
  const where = `${quotePath(shape.path || '.')}${shape.kind === 'gitmodules' ? '' : '/'}`;
  if (shape.kind === 'gitmodules') return `${where} names submodules`;
  if (shape.kind === 'dot-git')
    return `${where.replace(/\/$/, '')} is a repository or a pointer to one`;
  const names = await readdir(join(dir, shape.path)).catch(() => []);
  return `${where} looks like a repository (${(gitDirMarks(names) ?? ['HEAD']).join(', ')})`;
}

/**
 * A hash of what git would act on in a shape: a file's or link's content; for a folder, every
 * `config`, `config.worktree`, `commondir` and `gitdir` file at any depth and everything under
 * `hooks/` and `info/` (names, kinds, contents, link targets). Objects, refs, logs and the
 * index are left out: git stores them, it never runs them, and a user's own git updates them.
 */
async function fingerprint(path: string): Promise<string> {
  const hash = createHash('sha256');
  const visit = async (current: string, isActive: boolean): Promise<void> => {
    const info = await lstat(current).catch(() => undefined);
    const name = relative(path, current);
    if (!info) return;
    if (info.isSymbolicLink()) {
      hash.update(`link ${name} ${await readlink(current).catch(() => '')}\0`);
    } else if (info.isFile()) {
      if (!isActive && !ACTIVE_FILES.has(plainName(current.split('/').pop() ?? ''))) return;
      const content =
        info.size <= HASHED_BYTES
          ? await readFile(current).catch(() => Buffer.alloc(0))
          : `${info.size} ${info.mtimeMs}`;
      hash
        .update(`file ${name} ${info.mode & 0o111 ? 'x' : '-'} `)
        .update(content)
        .update('\0');
    } else if (info.isDirectory()) {
      const names = (await readdir(current).catch(() => [])).sort();
      for (const child of names) {
        const plain = plainName(child);
        if (!isActive && SKIPPED_FOLDERS.has(plain)) continue;
        await visit(join(current, child), isActive || ACTIVE_FOLDERS.has(plain));
      }
    }
  };
  // A file or link is hashed whole; a folder by what git would act on in it.
  await visit(path, !(await lstat(path).catch(() => undefined))?.isDirectory());
  return hash.digest('hex').slice(0, 32);
}

const ACTIVE_FILES = new Set(['config', 'config.worktree', 'commondir', 'gitdir', '.gitmodules']);
const ACTIVE_FOLDERS = new Set(['hooks', 'info']);
const SKIPPED_FOLDERS = new Set(['objects', 'refs', 'logs', 'lfs']);

/**
 * Makes a shape that was moved out of the task inert where it now lies: every `HEAD` in it is
 * renamed `HEAD.inert` and every `.git` `dot-git.inert`, so no git run inside the quarantine
 * finds a repository there (a user looking at it must not run the worker's config).
 */
export async function makeInert(path: string): Promise<void> {
  const info = await lstat(path).catch(() => undefined);
  if (!info?.isDirectory()) return;
  const entries = await readdir(path, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    const child = join(path, entry.name);
    const name = plainName(entry.name);
    const renamed =
      name === 'head' ? `${entry.name}.inert` : name === '.git' ? 'dot-git.inert' : undefined;
    const target = renamed ? join(path, renamed) : child;
    if (renamed) await rename(child, target).catch(() => undefined);
    if (entry.isDirectory()) await makeInert(target);
  }
}
