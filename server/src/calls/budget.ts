/**
 * Budgets: a daily cap shared by every session on the machine, and a per-task cap (a task's
 * calls together; for a one-shot `delegate`, its one call). A call reserves the worst-case
 * cost of one attempt ({@link worstCaseCost}) under a cross-process lock before it runs, and
 * again before each retry ({@link Reservation.renew}), once the ledger holds what the failed
 * attempt cost. The reservation stays counted until the caller has written the actual cost to
 * the ledger, so at every moment each call is counted at least once, and settled spend stays
 * within a cap as long as no attempt costs more than its reservation.
 *
 * An endpoint can still bill more (a gateway that adds its own prompt): calls already in
 * flight were admitted on reservations that may be just as short. So an over-run pauses the
 * daily cap (`budget/overrun.json`): no new call is admitted until every call that was in
 * flight when it was reported has settled, and the ledger again holds the true spend.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { configPath } from '../config/paths.ts';
import { writeFileAtomic } from '../util/atomic-write.ts';
import { formatUsd as usd } from '../util/format-usd.ts';
import { UserError } from '../util/user-error.ts';
import { overrunRefusal, recordOverrun } from './budget-overrun.ts';
import { readLedger, utcDay } from './ledger.ts';
import { parseJson } from '../util/read-json.ts';
export { fitToTaskBudget, TaskBudgetReached, worstCaseCost } from './worst-case.ts';

export interface BudgetConfig {
  dailyUsd?: number;
  perTaskUsd?: number;
}

/** A cross-process mutex. */
export type Lock = <T>(action: () => Promise<T>) => Promise<T>;

export interface Reservation {
  id: string;
  amountUsd: number;
  /**
   * Before another attempt of the same call, once the ledger holds what the failed one cost
   * (`lastAttemptUsd`): keeps the reservation for the next attempt when today's spend plus every
   * live reservation still fits in the daily cap, and the call's attempts so far plus another
   * one fit in the per-task cap; else drops it and throws a UserError saying why.
   */
  renew(lastAttemptUsd: number): Promise<void>;
  /** Call after the ledger holds the cost of the call's last attempt (`actualUsd`). Idempotent. */
  settle(actualUsd: number): Promise<void>;
  /** For a call that cost nothing (never sent). Idempotent. */
  release(): Promise<void>;
}

export type IsAlive = (pid: number, startTime: string) => boolean;

export interface ReserveOptions {
  dataHome: string;
  budget: BudgetConfig;
  worstCaseUsd: number;
  lock: Lock;
  isAlive: IsAlive;
  identity: { pid: number; startTime: string };
  /** What the reservation is for, kept in its file for whoever inspects a stuck one. */
  label: string;
  now?: () => Date;
}

interface ReservationFile {
  id: string;
  amountUsd: number;
  pid: number;
  startTime: string;
  label: string;
  createdAt: string;
}

/** Sums of separately rounded amounts must not refuse a call that lands exactly on the cap. */
const TOLERANCE_USD = 1e-9;

function reservationsDir(dataHome: string): string {
  return join(dataHome, 'budget', 'reservations');
}

/**
 * Reserves the worst-case cost of a call: spent today (ledger, UTC day) + live reservations
 * + `worstCaseUsd` must stay within `dailyUsd`, and `worstCaseUsd` within `perTaskUsd` (a
 * one-shot's call; a task's calls are fitted to its whole-run cap by {@link fitToTaskBudget}).
 * Throws a UserError giving the numbers and how to raise the cap. No budget configured → a
 * reservation that does nothing.
 */
export async function reserveBudget(options: ReserveOptions): Promise<Reservation> {
  const { dataHome, budget, worstCaseUsd } = options;
  if (!(worstCaseUsd >= 0)) throw new Error(`worstCaseUsd must be a cost, got ${worstCaseUsd}`);
  if (budget.dailyUsd === undefined && budget.perTaskUsd === undefined) {
    return { id: 'unbudgeted', amountUsd: worstCaseUsd, renew: noop, settle: noop, release: noop };
  }
  if (budget.perTaskUsd !== undefined && worstCaseUsd > budget.perTaskUsd + TOLERANCE_USD) {
    throw new UserError(perTaskRefusal(dataHome, worstCaseUsd, budget.perTaskUsd));
  }
  const now = options.now ?? (() => new Date());
  return options.lock(async () => {
    const live = await collectReservations(dataHome, options.isAlive);
    const { dailyUsd } = budget;
    const liveIds = live.map((reservation) => reservation.id);
    const paused = dailyUsd === undefined ? undefined : await overrunRefusal(dataHome, liveIds);
    if (paused) throw new UserError(paused);
    const spent = spentOn(dataHome, utcDay(now()));
    const reserved = sum(live.map((reservation) => reservation.amountUsd));
    if (dailyUsd !== undefined && spent + reserved + worstCaseUsd > dailyUsd + TOLERANCE_USD) {
      throw new UserError(dailyRefusal(dataHome, { spent, reserved, worstCaseUsd, dailyUsd }));
    }
    return writeReservation(dataHome, options, now());
  });
}

async function writeReservation(
  dataHome: string,
  options: ReserveOptions,
  createdAt: Date,
): Promise<Reservation> {
  const id = `r_${randomUUID()}`;
  const path = join(reservationsDir(dataHome), `${id}.json`);
  const amountUsd = options.worstCaseUsd;
  const content: ReservationFile = {
    id,
    amountUsd,
    ...options.identity,
    label: options.label,
    createdAt: createdAt.toISOString(),
  };
  await writeFileAtomic(path, `${JSON.stringify(content)}\n`);
  // The ledger, not the reservation, holds the actual cost: settling only stops the double count.
  const remove = () => rm(path, { force: true });
  let callSpentUsd = 0;
  const noteAttempt = async (attemptUsd: number) => {
    callSpentUsd += attemptUsd;
    if (attemptUsd > amountUsd + TOLERANCE_USD && options.budget.dailyUsd !== undefined) {
      await options.lock(async () => {
        const live = await collectReservations(options.dataHome, options.isAlive);
        const others = live.map((reservation) => reservation.id).filter((other) => other !== id);
        const overrun = { label: options.label, reservedUsd: amountUsd, actualUsd: attemptUsd };
        await recordOverrun(options.dataHome, overrun, others);
      });
    }
  };
  return {
    id,
    amountUsd,
    renew: async (lastAttemptUsd) => {
      await noteAttempt(lastAttemptUsd);
      const refusal = await options.lock(() => retryRefusal(options, { callSpentUsd, amountUsd }));
      if (refusal === undefined) return;
      await remove();
      throw new UserError(refusal);
    },
    settle: async (actualUsd) => {
      await noteAttempt(actualUsd);
      await remove();
    },
    release: remove,
  };
}

/** Why another attempt of a call may not start, if it may not (run under the lock). */
async function retryRefusal(
  options: ReserveOptions,
  call: { callSpentUsd: number; amountUsd: number },
): Promise<string | undefined> {
  const { dataHome, budget } = options;
  const { perTaskUsd, dailyUsd } = budget;
  const stop = `Stopped retrying ${options.label}: its attempts so far cost ${usd(call.callSpentUsd)}`;
  if (perTaskUsd !== undefined && call.callSpentUsd + call.amountUsd > perTaskUsd + TOLERANCE_USD) {
    return `${stop}, and another could cost ${usd(call.amountUsd)}, over the per-task cap of ${usd(perTaskUsd)}.`;
  }
  if (dailyUsd === undefined) return undefined;
  // This call's own reservation is among the live ones: it stands for the next attempt.
  const live = await collectReservations(dataHome, options.isAlive);
  const spent = spentOn(dataHome, utcDay(options.now?.() ?? new Date()));
  const reserved = sum(live.map((reservation) => reservation.amountUsd));
  if (spent + reserved <= dailyUsd + TOLERANCE_USD) return undefined;
  return (
    `${stop}: spent today ${usd(spent)} + reserved by calls in flight (this one's next attempt ` +
    `included) ${usd(reserved)} is over the daily cap of ${usd(dailyUsd)}.`
  );
}

/**
 * Today's spend and reservations for display. Without `isAlive`, reservations of holders that
 * died are counted until the next reservation clears them.
 */
export function budgetStatus(
  dataHome: string,
  budget: BudgetConfig,
  now: Date = new Date(),
  isAlive?: IsAlive,
): { spentTodayUsd: number; reservedUsd: number; leftTodayUsd?: number } {
  const spentTodayUsd = spentOn(dataHome, utcDay(now));
  const reservedUsd = sum(
    readReservations(dataHome)
      .filter((reservation) => !isAlive || isAlive(reservation.pid, reservation.startTime))
      .map((reservation) => reservation.amountUsd),
  );
  if (budget.dailyUsd === undefined) return { spentTodayUsd, reservedUsd };
  const leftTodayUsd = Math.max(0, budget.dailyUsd - spentTodayUsd - reservedUsd);
  return { spentTodayUsd, reservedUsd, leftTodayUsd };
}

function spentOn(dataHome: string, day: string): number {
  const records = readLedger(dataHome, { sinceDay: day }).filter((r) => utcDay(r.ts) === day);
  return sum(records.map((record) => record.costUsd));
}

/** Live reservations; those whose holder died are deleted (this runs under the lock). */
async function collectReservations(dataHome: string, isAlive: IsAlive): Promise<ReservationFile[]> {
  const live: ReservationFile[] = [];
  for (const reservation of readReservations(dataHome)) {
    if (isAlive(reservation.pid, reservation.startTime)) live.push(reservation);
    else await rm(join(reservationsDir(dataHome), `${reservation.id}.json`), { force: true });
  }
  return live;
}

function readReservations(dataHome: string): ReservationFile[] {
  const dir = reservationsDir(dataHome);
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => name.endsWith('.json'));
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    try {
      const value = parseJson(readFileSync(join(dir, name), 'utf8')) as ReservationFile;
      return Number.isFinite(value.amountUsd) && `${value.id}.json` === name ? [value] : [];
    } catch {
      return []; // removed between listing and reading: settled meanwhile
    }
  });
}

function dailyRefusal(
  dataHome: string,
  n: { spent: number; reserved: number; worstCaseUsd: number; dailyUsd: number },
): string {
  const needed = n.spent + n.reserved + n.worstCaseUsd;
  return (
    `Daily budget reached: spent today ${usd(n.spent)} + reserved by calls in flight ` +
    `${usd(n.reserved)} + this call's worst case ${usd(n.worstCaseUsd)} = ${usd(needed)}, ` +
    `over the daily cap of ${usd(n.dailyUsd)} (UTC day, all sessions). To raise it, set ` +
    `"budget": {"dailyUsd": ${suggestCap(needed)}} in ${configPath(dataHome)}, or use a local ` +
    `profile, or send less input.`
  );
}

function perTaskRefusal(dataHome: string, worstCaseUsd: number, perTaskUsd: number): string {
  return (
    `Per-task budget: this call's worst case ${usd(worstCaseUsd)} is over the per-task cap of ` +
    `${usd(perTaskUsd)}. Send less input or lower maxOutputTokens, or raise the cap: ` +
    `"budget": {"perTaskUsd": ${suggestCap(worstCaseUsd)}} in ${configPath(dataHome)}.`
  );
}

/** A round number just above what the refused call needed. */
function suggestCap(neededUsd: number): number {
  return Math.ceil(neededUsd * 1.25);
}

function sum(amounts: number[]): number {
  return amounts.reduce((total, amount) => total + amount, 0);
}

function noop(): Promise<void> {
  return Promise.resolve();
}
