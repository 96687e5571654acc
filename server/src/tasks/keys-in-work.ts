import { lstat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { git, gitBytes, resolveCommit, workerIdentity } from '../git/git.ts';
import { readConfigLazily } from '../profiles/read-config.ts';
import { namedSecrets } from '../profiles/known-secrets.ts';
import {
  longestForm,
  secretFinder,
  type NamedSecret,
  type SecretFinder,
} from '../util/secret-finder.ts';
import { errorMessage } from '../util/user-error.ts';
import { quotePath } from '../util/inert-text.ts';
import { readRegularFile } from '../util/regular-file.ts';
import type { Environment } from '../config/paths.ts';
import type { JobFile, PinnedRepository } from '../store/job-file.ts';
import { describeChanges } from './worktree.ts';
import type { InPlaceChanges } from './in-place-changes.ts';
import { withIndexCopy } from './working-tree.ts';

/** What one check reads at most; larger work is not passed unchecked but refused. */
const MAX_SCANNED_BYTES = 512 * 1024 * 1024;
/** Objects read from git in one go, by their total size. */
const BATCH_BYTES = 32 * 1024 * 1024;
/** Text scanned in one go; windows overlap by the longest form a key can take. */
const WINDOW_CHARS = 8 * 1024 * 1024;

type Scan = (text: string) => NamedSecret | undefined;

/**
 * Keys of this machine (every profile's, stored or in the environment, and Copilot logins) in
 * the work a task leaves, in any form a worker could write one (see secret-finder.ts). In a
 * worktree: everything that would reach the branch — each object reachable from its work (the
 * worker's commits and messages, then the uncommitted files, with their names) and not from its
 * base. In place: the files added or changed since the snapshot of its start (`inPlace`, as the
 * task's end measured them), and their names. One line per key found, naming where; empty when
 * none is.
 */
export async function keysInWork(
  job: JobFile,
  dataHome: string,
  env: Environment,
  inPlace?: InPlaceChanges | Error,
): Promise<string[]> {
  const secrets = await secretsFor(job, dataHome, env);
  if (secrets.length === 0) return [];
  const find = secretFinder(secrets);
  const scan: Scan = (text) => scanText(text, find, longestForm(secrets));
  try {
    if (job.isolation === 'worktree' && job.baseCommit && job.git) {
      return await keysInBranchWork(job.git, job.baseCommit, scan);
    }
    if (inPlace instanceof Error) throw inPlace;
    const changed = inPlace
      ? { root: job.workdir, paths: filesAddedOrChanged(inPlace) }
      : job.git
        ? await changedSince(job.git, Date.parse(job.createdAt))
        : undefined;
    return changed ? await keysInFiles(changed.root, changed.paths, scan) : [];
  } catch (error) {
    return [`the work could not be checked for keys (${errorMessage(error)})`];
  }
}

async function secretsFor(
  job: JobFile,
  dataHome: string,
  env: Environment,
): Promise<NamedSecret[]> {
  try {
    const config = await readConfigLazily(dataHome, job.project, env);
    return namedSecrets(dataHome, config.profiles.values(), env);
  } catch {
    // A config broken since the start still leaves the stored keys to look for.
    return namedSecrets(dataHome, [], env);
  }
}

function scanText(text: string, find: SecretFinder, overlap: number): NamedSecret | undefined {
  if (text.length <= WINDOW_CHARS) return find(text);
  for (let start = 0; start < text.length; start += WINDOW_CHARS - overlap) {
    const found = find(text.slice(start, start + WINDOW_CHARS));
    if (found) return found;
  }
  return undefined;
}

/**
 * The objects a branch would gain: the worktree's files as a commit on top of its HEAD (made
 * through a scratch index and referenced by nothing), and all it reaches that `base` does not.
 */
async function keysInBranchWork(
  repository: PinnedRepository,
  base: string,
  scan: Scan,
): Promise<string[]> {
  const cwd = repository.workTree;
  const tip = await withIndexCopy(repository, async (options) => {
    await git(cwd, ['add', '--all'], options);
    const tree = (await git(cwd, ['write-tree'], options)).trim();
    const head = await resolveCommit(cwd, 'HEAD', { repository });
    const parent = head ? ['-p', head] : [];
    const message = ['-m', 'delegate: the work, checked for keys'];
    return (
      await git(cwd, ['commit-tree', tree, ...parent, ...message], {
        repository,
        env: workerIdentity(),
      })
    ).trim();
  });
  const listing = await git(cwd, ['rev-list', '--objects', tip, `^${base}`], { repository });
  const objects = listing
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [id = '', ...name] = line.split(' ');
      return { id, name: name.join(' ') };
    });
  return scanObjects(repository, objects, scan);
}

async function scanObjects(
  repository: PinnedRepository,
  objects: Array<{ id: string; name: string }>,
  scan: Scan,
): Promise<string[]> {
  const cwd = repository.workTree;
  const sizes = (
    await gitBytes(cwd, ['cat-file', '--batch-check=%(objectsize)'], {
      repository,
      input: Buffer.from(objects.map((object) => `${object.id}\n`).join('')),
    })
  )
    .toString()
    .split('\n')
    .map(Number);
  const total = sizes.reduce((sum, size) => sum + (size || 0), 0);
  if (total > MAX_SCANNED_BYTES) {
    return [`the work is too large to check for keys (${Math.round(total / 2 ** 20)} MB)`];
  }
  const found: string[] = [];
  for (const batch of batches(objects, sizes)) {
    const bytes = await gitBytes(cwd, ['cat-file', '--batch'], {
      repository,
      input: Buffer.from(batch.map((object) => `${object.id}\n`).join('')),
    });
    let at = 0;
    for (const object of batch) {
      const header = bytes.indexOf(10, at);
      const [, type, sizeText] = bytes.subarray(at, header).toString().split(' ');
      const size = Number(sizeText);
      const content = bytes.subarray(header + 1, header + 1 + size);
      at = header + 1 + size + 1;
      const inName = scan(object.name);
      const secret = inName ?? scan(content.toString('utf8'));
      if (!secret) continue;
      // A name holding the key is never printed: the result would carry it.
      const where =
        type === 'commit'
          ? 'a commit message'
          : type === 'tree' || inName
            ? `a file name in ${folderOf(object.name, type === 'tree' && !inName)}`
            : quotePath(object.name);
      found.push(`${where} holds ${secret.what}`);
    }
  }
  return found;
}

function* batches<T>(items: T[], sizes: number[]): Generator<T[]> {
  let batch: T[] = [];
  let bytes = 0;
  for (const [index, item] of items.entries()) {
    batch.push(item);
    bytes += sizes[index] || 0;
    if (bytes >= BATCH_BYTES) {
      yield batch;
      batch = [];
      bytes = 0;
    }
  }
  if (batch.length) yield batch;
}

/** In place: the files added or changed since the snapshot taken at the task's start. */
function filesAddedOrChanged(inPlace: InPlaceChanges): string[] {
  return inPlace.changes
    .filter((change) => change.status !== 'D' && change.after?.type === 'file')
    .map((change) => change.path);
}

/** In place, a task from before snapshots: what git sees changed, written since `since`. */
async function changedSince(
  repository: PinnedRepository,
  since: number,
): Promise<{ root: string; paths: string[] }> {
  const { filesChanged } = await describeChanges(repository);
  const paths: string[] = [];
  for (const { status, path } of filesChanged) {
    if (status === 'D') continue;
    const info = await lstat(join(repository.workTree, path)).catch(() => undefined);
    if (info?.isFile() && info.mtimeMs >= since - 2_000) paths.push(path);
  }
  return { root: repository.workTree, paths };
}

/** The files (relative to `root`) and their names searched for keys. */
async function keysInFiles(root: string, paths: readonly string[], scan: Scan): Promise<string[]> {
  const found: string[] = [];
  let total = 0;
  for (const path of paths) {
    const absolute = join(root, path);
    const info = await lstat(absolute).catch(() => undefined);
    if (!info?.isFile()) continue;
    total += info.size;
    if (total > MAX_SCANNED_BYTES) return [...found, 'the work is too large to check for keys'];
    const inName = scan(path);
    const secret = inName ?? scan((await readRegularFile(absolute, path)).toString('utf8'));
    if (secret) {
      found.push(
        `${inName ? `a file name in ${folderOf(path)}` : quotePath(path)} holds ${secret.what}`,
      );
    }
  }
  return found;
}

/** The folder a path is in (or the path itself, for a tree), in words. */
function folderOf(path: string, isFolder = false): string {
  const folder = isFolder ? path : dirname(path);
  return folder && folder !== '.' ? quotePath(folder) : 'the top folder';
}
