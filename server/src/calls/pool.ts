import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { currentProcessIdentity } from '../util/process-identity.ts';
import {
  claimHeldFile,
  isAbandoned,
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

function slotFor(path: string, poolKey: string, index: number, held: HeldFileVersion): PoolSlot {
  let isReleased = false;
  return {
    poolKey,
    index,
    release: () =>
      new Promise<void>((resolve) => {
        if (!isReleased) {
          isReleased = true;
          removeHeldFile(path, held);
        }
        resolve();
      }),
  };
}

/** One pass over the slots: the first free one (or one whose holder died), taken. */
function takeFreeSlot(folder: string, poolKey: string, size: number, label?: string) {
  const text = JSON.stringify({
    poolKey,
    ...currentProcessIdentity(),
    since: new Date().toISOString(),
    ...(label === undefined ? {} : { label }),
  });
  for (let index = 0; index < size; index += 1) {
    const path = join(folder, `${index}.json`);
    const held = claimHeldFile(path, text);
    if (held) return slotFor(path, poolKey, index, held);
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
    /** Told who holds the slots while this waits: at the first full look, then each second. */
    onFull?: (holders: PoolHolder[]) => void;
  } = {},
): Promise<PoolSlot | undefined> {
  if (!Number.isInteger(size) || size < 1) {
    throw new RangeError(`A pool size must be a positive integer, got ${size}.`);
  }
  const folder = join(slotsDir, poolFolderName(poolKey));
  mkdirSync(folder, { recursive: true });
  const deadline = Date.now() + (options.waitMs ?? 0);
  let toldAt = 0;
  for (;;) {
    options.signal?.throwIfAborted();
    const slot = takeFreeSlot(folder, poolKey, size, options.label);
    if (slot) return slot;
    const remainingMs = deadline - Date.now();
    if (remainingMs <= 0) return undefined;
    if (options.onFull && Date.now() - toldAt >= FULL_REPORT_MS) {
      toldAt = Date.now();
      options.onFull(holdersIn(folder));
    }
    // Jittered polling: waiters do not retry in lockstep, and no busy loop.
    await pause(Math.min(remainingMs, 20 + Math.random() * 80), options.signal);
  }
}

function listFolder(path: string): string[] {
  try {
    return readdirSync(path).sort();
  } catch {
    return [];
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
  return listFolder(slotsDir).flatMap((folder) => holdersIn(join(slotsDir, folder)));
}

/** How often a waiter hears again who holds a full pool. */
const FULL_REPORT_MS = 1_000;

/** The live holders of one pool's folder. */
function holdersIn(folder: string): PoolHolder[] {
  return listFolder(folder).flatMap((name) => {
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
