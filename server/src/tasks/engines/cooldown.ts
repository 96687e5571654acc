import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { withFileLock } from '../../util/file-lock.ts';
import { writeFileAtomicSync } from '../../util/atomic-write.ts';
import { parseJson } from '../../util/read-json.ts';

/** After a throttle, no process starts this engine again before the cooldown ends. */
export const DEFAULT_COOLDOWN_S = 60;
/** Least time between two starts of one engine, across processes. */
export const STAGGER_MS = 1_500;

interface EngineTimes {
  /** ISO time before which no run may start (after a throttle). */
  coolUntil?: string;
  reason?: string;
  /** ISO time of the last start. */
  lastStart?: string;
}

const fileOf = (dataHome: string, format: string) =>
  join(dataHome, 'cli-engines', `${format}.json`);

function readTimes(dataHome: string, format: string): EngineTimes {
  try {
    return parseJson(readFileSync(fileOf(dataHome, format), 'utf8')) as EngineTimes;
  } catch {
    return {};
  }
}

function changeTimes(
  dataHome: string,
  format: string,
  change: (times: EngineTimes) => EngineTimes,
): Promise<void> {
  mkdirSync(join(dataHome, 'cli-engines'), { recursive: true });
  return withFileLock(`${fileOf(dataHome, format)}.lock`, () => {
    const next = change(readTimes(dataHome, format));
    writeFileAtomicSync(fileOf(dataHome, format), `${JSON.stringify(next)}\n`);
    return Promise.resolve();
  });
}

/** Records a throttle: every process waits `seconds` before the next start of this engine. */
export function startCooldown(
  dataHome: string,
  format: string,
  seconds: number,
  reason: string,
): Promise<void> {
  const until = new Date(Date.now() + seconds * 1000).toISOString();
  return changeTimes(dataHome, format, (times) => ({
    ...times,
    coolUntil: times.coolUntil && times.coolUntil > until ? times.coolUntil : until,
    reason: reason.slice(0, 200),
  }));
}

/** The end of the current cooldown, if one is running. */
export function cooldownUntil(dataHome: string, format: string): Date | undefined {
  const until = readTimes(dataHome, format).coolUntil;
  return until && Date.parse(until) > Date.now() ? new Date(until) : undefined;
}

/**
 * Waits out any cooldown and the stagger since the previous start, then records this start.
 * `onWait` is told what it waits for (at most every few seconds), so the task shows it.
 */
export async function waitForStartTurn(
  dataHome: string,
  format: string,
  signal: AbortSignal,
  onWait: (activity: string) => void,
): Promise<void> {
  for (;;) {
    signal.throwIfAborted();
    const until = cooldownUntil(dataHome, format);
    if (until) {
      onWait(`cooling down after a throttle until ${until.toISOString()}`);
      await sleep(Math.min(until.getTime() - Date.now(), 5_000), undefined, { signal });
      continue;
    }
    let waitMs = 0;
    await changeTimes(dataHome, format, (times) => {
      const last = times.lastStart ? Date.parse(times.lastStart) : 0;
      waitMs = Math.max(0, last + STAGGER_MS - Date.now());
      return waitMs > 0 ? times : { ...times, lastStart: new Date().toISOString() };
    });
    if (waitMs === 0) return;
    await sleep(waitMs, undefined, { signal });
  }
}
