/**
 * Over-runs of the daily cap: an attempt that cost more than its reservation means the calls in
 * flight beside it may have been admitted on reservations just as short. Until each of them has
 * settled (and the ledger holds the true spend), no new call is admitted. The state lives in
 * `<dataHome>/budget/overrun.json`; both functions run under the budget lock.
 */
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../util/atomic-write.ts';
import { formatUsd as usd } from '../util/format-usd.ts';
import { parseJson } from '../util/read-json.ts';
import { plural } from '../util/plural.ts';

interface OverrunFile {
  at: string;
  label: string;
  reservedUsd: number;
  actualUsd: number;
  /** Reservations that were live when an over-run was reported. */
  waitFor: string[];
}

function overrunPath(dataHome: string): string {
  return join(dataHome, 'budget', 'overrun.json');
}

/** Records an over-run; new calls wait for `inFlightIds` (and any still awaited from before). */
export async function recordOverrun(
  dataHome: string,
  overrun: { label: string; reservedUsd: number; actualUsd: number },
  inFlightIds: readonly string[],
): Promise<void> {
  const waitFor = new Set([...(readOverrun(dataHome)?.waitFor ?? []), ...inFlightIds]);
  const content: OverrunFile = { at: new Date().toISOString(), ...overrun, waitFor: [...waitFor] };
  await writeFileAtomic(overrunPath(dataHome), `${JSON.stringify(content)}\n`);
}

/**
 * Why a new call may not start yet, while calls in flight at a reported over-run are still
 * live; once none is, the over-run is settled and its record removed.
 */
export async function overrunRefusal(
  dataHome: string,
  liveIds: readonly string[],
): Promise<string | undefined> {
  const overrun = readOverrun(dataHome);
  if (!overrun) return undefined;
  const pending = overrun.waitFor.filter((id) => liveIds.includes(id));
  if (pending.length === 0) {
    await rm(overrunPath(dataHome), { force: true });
    return undefined;
  }
  return (
    `Daily budget paused: a call of ${overrun.label} cost ${usd(overrun.actualUsd)}, more than the ` +
    `${usd(overrun.reservedUsd)} reserved for it, so ${plural(pending.length, 'call')} in flight then may ` +
    'cost more than reserved too. No new call starts until they have finished and their cost is ' +
    'in the ledger; try again in a moment.'
  );
}

function readOverrun(dataHome: string): OverrunFile | undefined {
  try {
    const value = parseJson(readFileSync(overrunPath(dataHome), 'utf8')) as OverrunFile;
    return Array.isArray(value.waitFor) ? value : undefined;
  } catch {
    return undefined;
  }
}
