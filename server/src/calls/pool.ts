import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { currentProcessIdentity } from '../util/process-identity.ts';
import { folderLook, folderNames } from '../util/file-fingerprint.ts';
import {
  claimHeldFile,
  isAbandoned,
  isStillHeldFile,
  readHeldFile,
  removeHeldFile,
  type HeldFileVersion,
} from '../util/file-lock.ts';

export interface PoolSlot {
  poolKey: string;
  index: number;
  /** Idempotent; removes the slot file only while it is still this slot's. */
  release(): Promise<void>;
}

export interface PoolHolder {
  poolKey: string;
  index: number;
  pid: number;
  startTime: string;
  /** ISO time the slot was taken. */
  since: string;
  label?: string;
}

const SLOT_FILE = /^(\d+)\.json$/;
/** File names are limited to 255 bytes; longer keys keep a readable head plus a hash. */
const MAX_FOLDER_NAME = 120;

/**
 * A readable folder name for any pool key (URLs, slashes, colons). Beyond encodeURIComponent,
 * `~` is encoded so that only shortened names carry one, and a leading `.` so that no key
 * becomes `.`, `..` or a hidden folder.
 */
function poolFolderName(poolKey: string): string {
  if (poolKey === '') throw new Error('A pool key must not be empty.');
  const encoded = encodeURIComponent(poolKey)
    .replace(/[!'()*~]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/^\./, '%2E');
  if (encoded.length <= MAX_FOLDER_NAME) return encoded;
  const hash = createHash('sha256').update(poolKey).digest('hex').slice(0, 16);
  return `${encoded.slice(0, MAX_FOLDER_NAME - hash.length - 1)}~${hash}`;
}

/**
 * The slot whose file `held` is at `path`. `folder`: a settled fingerprint of the pool's folder
 * at whose look (or after it) the file was known to be this slot's (see KeptSlot).
 */
function slotFor(
  path: string,
  poolKey: string,
  index: number,
  held: HeldFileVersion,
  keep?: { ms: number; key: string },
  folder?: string,
): PoolSlot {
  let isReleased = false;
  return {
    poolKey,
    index,
    release: () =>
      new Promise<void>((resolve) => {
        if (!isReleased) {
          isReleased = true;
          if (!keep) removeHeldFile(path, held);
          else {
            const pool = lookAtPool(dirname(path));
            if (!pool.hasWaiter) {
              // Vouched for by the folder when nothing in it changed since the file was known
              // ours; else by one look at the file (a folder still settling vouches for nothing).
              const isVouched =
                pool.fingerprint !== undefined && isStillOurs(path, held, folder, pool);
              const vouched = isVouched ? { folder: pool.fingerprint } : {};
              keepSlot(keep.key, { path, poolKey, index, held, ...vouched }, keep.ms);
            } else {
              // Somebody waits: it goes to them now, and this caller's next call steps back.
              removeHeldFile(path, held);
              owed.add(keep.key);
            }
          }
        }
        resolve();
      }),
  };
}

/**
 * A slot released with `keepMs`: still held (its file unchanged) for that long, for this
 * process's next call of the same pool and label, which takes it without touching the disk. A
 * task's turns come back to back, so its slot is taken once rather than once a turn. A call
 * waiting for the pool (in any process) marks its wait with a `wait-*.json` file in the pool's
 * folder: a slot is not kept while one is there, and a keeper that finds one at its next call
 * lets its kept slot go and steps back for {@link YIELD_MS}, so the waiter gets it first.
 */
interface KeptSlot {
  path: string;
  poolKey: string;
  index: number;
  held: HeldFileVersion;
  /**
   * A settled fingerprint of the pool's folder at whose look the slot's file was known to be this
   * slot's: while the folder still has it, no file in it came, went or was replaced, so the file
   * is still this slot's without a look at it. Absent: the next call looks at the file.
   */
  folder?: string;
  timer: NodeJS.Timeout;
}

const kept = new Map<string, KeptSlot>();
/** Keys whose last release went to a waiter: their next call steps back first. */
const owed = new Set<string>();
/** Longer than a waiter's longest pause between looks (100 ms). */
const YIELD_MS = 150;
const WAIT_FILE = /^wait-\d+-\d+\.json$/;
let waits = 0;
let isDroppedAtExit = false;

function keepSlot(key: string, slot: Omit<KeptSlot, 'timer'>, keepMs: number): void {
  dropKept(key);
  const timer = setTimeout(() => dropKept(key), keepMs);
  // A kept slot never keeps a process alive; one exiting lets it go (below).
  timer.unref();
  if (!isDroppedAtExit) {
    isDroppedAtExit = true;
    process.once('exit', dropAllKept);
  }
  kept.set(key, { ...slot, timer });
}

function dropKept(key: string): void {
  const slot = kept.get(key);
  if (!slot) return;
  kept.delete(key);
  clearTimeout(slot.timer);
  removeHeldFile(slot.path, slot.held);
}

function dropAllKept(): void {
  for (const key of [...kept.keys()]) dropKept(key);
}

/**
 * The slot this process kept for `key`, while nobody waits for the pool, it still fits the size,
 * and its file is still this very one; else it goes, and a call whose last slot was kept or went
 * to a waiter steps back while others wait, so that it does not take the slot again at once.
 */
async function takeKept(
  key: string,
  folder: string,
  size: number,
  keepMs: number,
  signal: AbortSignal | undefined,
): Promise<PoolSlot | undefined> {
  const slot = kept.get(key);
  const isOwed = owed.delete(key);
  if (!slot && !isOwed) return undefined;
  const pool = lookAtPool(folder);
  const waited = pool.hasWaiter;
  if (slot) {
    kept.delete(key);
    clearTimeout(slot.timer);
    if (!waited && slot.index < size && isStillOurs(slot.path, slot.held, slot.folder, pool)) {
      const keep = { ms: keepMs, key };
      return slotFor(slot.path, slot.poolKey, slot.index, slot.held, keep, pool.fingerprint);
    }
    removeHeldFile(slot.path, slot.held);
  }
  if (waited) await pause(YIELD_MS, signal);
  return undefined;
}

/**
 * Whether the slot file at `path` is still the one held: vouched for by the folder's look when it
 * has the fingerprint at which the file was last known ours (`vouched`), else one look at the file.
 */
function isStillOurs(
  path: string,
  held: HeldFileVersion,
  vouched: string | undefined,
  look: { fingerprint?: string },
): boolean {
  return (vouched !== undefined && vouched === look.fingerprint) || isStillHeldFile(path, held);
}

/**
 * One look at a pool's folder: whether another live process (or call) waits for a slot, and the
 * folder's settled fingerprint (see `folderLook`).
 */
function lookAtPool(folder: string): { hasWaiter: boolean; fingerprint?: string } {
  const { names, fingerprint } = folderLook(folder);
  const hasWaiter = names.some((name) => {
    if (!WAIT_FILE.test(name)) return false;
    const path = join(folder, name);
    try {
      const file = readHeldFile(path);
      if (!file) return false;
      if (!isAbandoned(file)) return true;
      removeHeldFile(path, file);
    } catch {
      // A wait file that cannot be read is not a waiter this call can step back for.
    }
    return false;
  });
  return fingerprint === undefined ? { hasWaiter } : { hasWaiter, fingerprint };
}

/** Marks this call's wait in the pool's folder, until the function it returns is called. */
function markWait(folder: string, poolKey: string): () => void {
  waits += 1;
  const path = join(folder, `wait-${process.pid}-${waits}.json`);
  const held = claimHeldFile(path, JSON.stringify({ poolKey, ...currentProcessIdentity() }));
  return () => {
    if (held) removeHeldFile(path, held);
  };
}

/** One pass over the slots: the first free one (or one whose holder died), taken. */
function takeFreeSlot(
  folder: string,
  poolKey: string,
  size: number,
  label: string | undefined,
  keep: { ms: number; key: string } | undefined,
) {
  const text = JSON.stringify({
    poolKey,
    ...currentProcessIdentity(),
    since: new Date().toISOString(),
    ...(label === undefined ? {} : { label }),
  });
  for (let index = 0; index < size; index += 1) {
    const path = join(folder, `${index}.json`);
    const held = claimHeldFile(path, text);
    if (held) return slotFor(path, poolKey, index, held, keep);
  }
  return undefined;
}

/** Sleeps, but rejects with the signal's own reason (not a generic AbortError) on abort. */
async function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  try {
    await sleep(ms, undefined, { signal });
  } catch (error) {
    signal?.throwIfAborted();
    throw error;
  }
}

/**
 * Takes a free slot of `poolKey` (size `size`), shared by every process on the machine,
 * waiting up to `waitMs` (0 = one try); undefined when still full. A slot held by a dead
 * process is free at once. Never takes a slot from a live holder, even a suspended one
 * (SIGSTOP): a holder that is merely slow must not end up sharing its slot.
 */
export async function acquireSlot(
  slotsDir: string,
  poolKey: string,
  size: number,
  options: {
    waitMs?: number;
    signal?: AbortSignal;
    label?: string;
    /**
     * How long release() keeps the slot for this process's next call with the same label (see
     * {@link KeptSlot}); 0 or absent: released at once.
     */
    keepMs?: number;
    /** Told who holds the slots while this waits: at the first full look, then each second. */
    onFull?: (holders: PoolHolder[]) => void;
  } = {},
): Promise<PoolSlot | undefined> {
  if (!Number.isInteger(size) || size < 1) {
    throw new RangeError(`A pool size must be a positive integer, got ${size}.`);
  }
  const folder = join(slotsDir, poolFolderName(poolKey));
  const keepMs = options.keepMs ?? 0;
  const keep =
    keepMs > 0 ? { ms: keepMs, key: `${folder}\u0000${options.label ?? ''}` } : undefined;
  if (keep) {
    options.signal?.throwIfAborted();
    const reused = await takeKept(keep.key, folder, size, keepMs, options.signal);
    if (reused) return reused;
  }
  mkdirSync(folder, { recursive: true });
  const deadline = Date.now() + (options.waitMs ?? 0);
  let toldAt = 0;
  let endWait: (() => void) | undefined;
  try {
    for (;;) {
      options.signal?.throwIfAborted();
      const slot = takeFreeSlot(folder, poolKey, size, options.label, keep);
      if (slot) return slot;
      const remainingMs = deadline - Date.now();
      if (remainingMs <= 0) return undefined;
      endWait ??= markWait(folder, poolKey);
      if (options.onFull && Date.now() - toldAt >= FULL_REPORT_MS) {
        toldAt = Date.now();
        options.onFull(holdersIn(folder));
      }
      // Jittered polling: waiters do not retry in lockstep, and no busy loop.
      await pause(Math.min(remainingMs, 20 + Math.random() * 80), options.signal);
    }
  } finally {
    endWait?.();
  }
}

function liveHolder(path: string, index: number): PoolHolder | undefined {
  const file = readHeldFile(path);
  if (!file) return undefined;
  if (isAbandoned(file)) {
    removeHeldFile(path, file);
    return undefined;
  }
  const { content, holder } = file;
  // A file still being written has no holder yet.
  if (!holder || typeof content?.poolKey !== 'string') return undefined;
  return {
    poolKey: content.poolKey,
    index,
    pid: holder.pid,
    startTime: holder.startTime,
    since: typeof content.since === 'string' ? content.since : '',
    ...(typeof content.label === 'string' ? { label: content.label } : {}),
  };
}

/** Live holders per pool key; dead holders' files are removed as they are found. */
export function poolHolders(slotsDir: string): PoolHolder[] {
  return folderNames(slotsDir).flatMap((folder) => holdersIn(join(slotsDir, folder)));
}

/** How often a waiter hears again who holds a full pool. */
const FULL_REPORT_MS = 1_000;

/** The live holders of one pool's folder. */
function holdersIn(folder: string): PoolHolder[] {
  return folderNames(folder).flatMap((name) => {
    const index = SLOT_FILE.exec(name)?.[1];
    if (index === undefined) return [];
    try {
      const holder = liveHolder(join(folder, name), Number(index));
      return holder ? [holder] : [];
    } catch {
      // A report of holders must not fail on one file it cannot read.
      return [];
    }
  });
}
