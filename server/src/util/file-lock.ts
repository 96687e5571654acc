import {
  closeSync,
  fstatSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { fingerprintOfStats } from './file-fingerprint.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  currentProcessIdentity,
  isProcessAlive,
  type ProcessIdentity,
} from './process-identity.ts';

const DEFAULT_TIMEOUT_MS = 10_000;
/** A writer that died between creating a file and writing its holder leaves it empty. */
const EMPTY_FILE_ABANDONED_AFTER_MS = 2_000;

/**
 * One version of a held file (a lock or a pool slot). The fingerprint (inode and mtime) tells
 * this file from a newer one created at the same path, even one that reuses the inode.
 */
export interface HeldFileVersion {
  fingerprint: string;
  text: string;
}

export interface HeldFile extends HeldFileVersion {
  ageMs: number;
  content?: Record<string, unknown>;
  /** Undefined while the file is empty or unreadable (being written, or its writer died). */
  holder?: ProcessIdentity;
}

const errorCode = (error: unknown) => (error as NodeJS.ErrnoException).code;

function fingerprintOf(fd: number): { fingerprint: string; ageMs: number } {
  const stats = fstatSync(fd, { bigint: true });
  return { fingerprint: fingerprintOfStats(stats), ageMs: Date.now() - Number(stats.mtimeMs) };
}

/** The file at `path` is still `version` (same inode and mtime): nobody removed or replaced it. */
export function isStillHeldFile(path: string, version: HeldFileVersion): boolean {
  try {
    return fingerprintOfStats(statSync(path, { bigint: true })) === version.fingerprint;
  } catch {
    return false;
  }
}

function readOpenFile(fd: number): HeldFile {
  const file: HeldFile = { ...fingerprintOf(fd), text: readFileSync(fd, 'utf8') };
  try {
    const content: unknown = JSON.parse(file.text);
    if (typeof content !== 'object' || content === null) return file;
    file.content = content as Record<string, unknown>;
    if (
      'pid' in content &&
      typeof content.pid === 'number' &&
      'startTime' in content &&
      typeof content.startTime === 'string'
    ) {
      file.holder = { pid: content.pid, startTime: content.startTime };
    }
  } catch {
    // Empty or half-written: no holder yet.
  }
  return file;
}

/** The file at `path` as it is now; undefined when there is none. */
export function readHeldFile(path: string): HeldFile | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw error;
  }
  try {
    return readOpenFile(fd);
  } finally {
    closeSync(fd);
  }
}

/** Its holder is dead, or it stayed without a holder longer than any live writer would take. */
export function isAbandoned(file: HeldFile): boolean {
  return file.holder ? !isProcessAlive(file.holder) : file.ageMs > EMPTY_FILE_ABANDONED_AFTER_MS;
}

/**
 * Removes `path` only while it is still `version`. Renaming it aside first means one of several
 * removers gets it; one that got a newer file (created after it read the old one) links it
 * back, and link() refuses to overwrite a file created meanwhile.
 */
export function removeHeldFile(path: string, version: HeldFileVersion): boolean {
  // Unique without a random draw: no other process has this pid while this one lives.
  removals += 1;
  const aside = `${path}.${process.pid}.${removals}.removed`;
  try {
    renameSync(path, aside);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return false;
    throw error;
  }
  const taken = readHeldFile(aside);
  const isSame = taken?.fingerprint === version.fingerprint && taken.text === version.text;
  if (!isSame) {
    try {
      linkSync(aside, path);
    } catch (error) {
      if (errorCode(error) !== 'EEXIST') throw error;
    }
  }
  unlinkSync(aside);
  return isSame;
}

/** Files this process has removed: each one's name aside is its own. */
let removals = 0;

function createHeldFile(path: string, text: string): HeldFileVersion | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'wx');
  } catch (error) {
    if (errorCode(error) === 'EEXIST') return undefined;
    throw error;
  }
  try {
    writeSync(fd, text);
    return { fingerprint: fingerprintOf(fd).fingerprint, text };
  } catch (error) {
    // Leave no holderless file behind for others to wait on.
    unlinkSync(path);
    throw error;
  } finally {
    closeSync(fd);
  }
}

/**
 * One attempt to hold `path` with `text`: create it, or take it over when its holder is
 * gone. Never takes it from a live holder, however long it has held it (even a suspended one).
 */
export function claimHeldFile(path: string, text: string): HeldFileVersion | undefined {
  const created = createHeldFile(path, text);
  if (created) return created;
  const current = readHeldFile(path);
  if (current && !isAbandoned(current)) return undefined;
  if (current) removeHeldFile(path, current);
  return createHeldFile(path, text);
}

function describeHolder(file: HeldFile | undefined): string {
  if (file?.holder) return `pid ${file.holder.pid}`;
  return 'a process that has not written its pid yet';
}

/** A lock not got within its time: the caller may say what the lock guards and what to do. */
export class LockTimeoutError extends Error {
  constructor(
    readonly lockPath: string,
    readonly timeoutMs: number,
    /** Who holds it: `pid <n>`, or a process that has not written its pid yet. */
    readonly holder: string,
  ) {
    super(`Timed out after ${timeoutMs} ms waiting for the lock ${lockPath}, held by ${holder}`);
  }
}

async function acquireLock(lockPath: string, timeoutMs: number): Promise<HeldFileVersion> {
  const deadline = Date.now() + timeoutMs;
  const text = JSON.stringify(currentProcessIdentity());
  for (;;) {
    const held = claimHeldFile(lockPath, text);
    if (held) return held;
    if (Date.now() >= deadline) {
      throw new LockTimeoutError(lockPath, timeoutMs, describeHolder(readHeldFile(lockPath)));
    }
    // Jitter keeps waiters from retrying in lockstep.
    await sleep(5 + Math.random() * 45);
  }
}

/**
 * Runs `action` while holding a mutex shared by every process on the machine: the file
 * `lockPath`, created exclusively and holding the holder's identity. A lock of a dead process
 * is broken at once; a live holder keeps it. Throws a {@link LockTimeoutError} naming the lock
 * and its holder after `timeoutMs` (default 10 s).
 */
export async function withFileLock<T>(
  lockPath: string,
  action: () => Promise<T>,
  options: { timeoutMs?: number } = {},
): Promise<T> {
  mkdirSync(dirname(lockPath), { recursive: true });
  const held = await acquireLock(lockPath, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  try {
    return await action();
  } finally {
    removeHeldFile(lockPath, held);
  }
}
