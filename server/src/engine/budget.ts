/**
 * Budgets: a daily cap shared by every session on the machine, and a per-task cap (a task's
 * calls together; for a one-shot `delegate`, its one call). A call reserves its worst-case
 * cost under a cross-process lock before it runs; the reservation stays counted until the
 * caller has written the actual cost to the ledger, so at every moment each call is counted
 * at least once and spend never passes a cap.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { configPath } from '../config/paths.ts';
import { writeFileAtomic } from '../util/atomic-write.ts';
import { UserError } from '../util/user-error.ts';
import { readLedger, utcDay } from './ledger.ts';
import { costOf, type Price } from './pricing.ts';

export interface BudgetConfig {
  dailyUsd?: number;
  perTaskUsd?: number;
}

/** A cross-process mutex. */
export type Lock = <T>(action: () => Promise<T>) => Promise<T>;

export interface Reservation {
  id: string;
  amountUsd: number;
  /** Call after the ledger holds the call's actual cost. Idempotent. */
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
    return { id: 'unbudgeted', amountUsd: worstCaseUsd, settle: noop, release: noop };
  }
  if (budget.perTaskUsd !== undefined && worstCaseUsd > budget.perTaskUsd + TOLERANCE_USD) {
    throw new UserError(perTaskRefusal(dataHome, worstCaseUsd, budget.perTaskUsd));
  }
  const now = options.now ?? (() => new Date());
  return options.lock(async () => {
    const live = await collectReservations(dataHome, options.isAlive);
    const spent = spentOn(dataHome, utcDay(now()));
    const reserved = sum(live.map((reservation) => reservation.amountUsd));
    const { dailyUsd } = budget;
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
  const content: ReservationFile = {
    id,
    amountUsd: options.worstCaseUsd,
    ...options.identity,
    label: options.label,
    createdAt: createdAt.toISOString(),
  };
  await writeFileAtomic(path, `${JSON.stringify(content)}\n`);
  // The ledger, not the reservation, holds the actual cost: settling only stops the double count.
  const remove = () => rm(path, { force: true });
  return { id, amountUsd: options.worstCaseUsd, settle: remove, release: remove };
}

/** A task's next call cannot fit in what is left of its cap; the task should stop there. */
export class TaskBudgetReached extends UserError {
  constructor(
    readonly spentUsd: number,
    readonly capUsd: number,
  ) {
    super(
      `budget reached: the task spent ${usd(spentUsd)} of its ${usd(capUsd)} cap, and its next model call ` +
        'could not fit in what is left. Raise budget_usd (or "budget": {"perTaskUsd": …}) to let it go further.',
    );
  }
}

/** A task call allowed fewer output tokens than this is not worth making. */
const MIN_OUTPUT_TOKENS = 256;

/**
 * The output allowance a task's call can afford with what is left of its cap (worst case, as
 * the reservation counts it): the request as asked when it fits, a smaller `maxOutputTokens`
 * when that still leaves a useful answer, else {@link TaskBudgetReached}.
 */
export function fitToTaskBudget<T extends { maxOutputTokens: number }>(
  request: T,
  price: Price,
  inputBytes: number,
  budget: { capUsd: number; spentUsd: number },
): T {
  const leftUsd = budget.capUsd - budget.spentUsd + TOLERANCE_USD;
  if (worstCaseCost(price, inputBytes, request.maxOutputTokens) <= leftUsd) return request;
  const inputUsd = worstCaseCost(price, inputBytes, 0);
  const perOutputToken = worstCaseCost(price, 0, 1);
  const affordable = perOutputToken > 0 ? Math.floor((leftUsd - inputUsd) / perOutputToken) : 0;
  if (affordable < MIN_OUTPUT_TOKENS) throw new TaskBudgetReached(budget.spentUsd, budget.capUsd);
  return { ...request, maxOutputTokens: Math.min(request.maxOutputTokens, affordable) };
}

/** Worst case of a call: ceil(inputBytes / 3) input tokens (≥ any tokenizer's count) plus every output token allowed. */
export function worstCaseCost(price: Price, inputBytes: number, maxOutputTokens: number): number {
  const inputTokens = Math.ceil(inputBytes / 3);
  return costOf(price, { inputTokens, outputTokens: maxOutputTokens, cachedInputTokens: 0 });
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
      const value = JSON.parse(readFileSync(join(dir, name), 'utf8')) as ReservationFile;
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

/** Cents, plus up to two more digits so that small per-call amounts do not read as $0.00. */
function usd(amount: number): string {
  const digits = { minimumFractionDigits: 2, maximumFractionDigits: 4 };
  return `$${amount.toLocaleString('en-US', { ...digits, useGrouping: false })}`;
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
