/**
 * Verified outcomes: one JSON line per ended piece of work in `<dataHome>/outcomes.jsonl` — a
 * task (or one attempt or rung of it) with its tests' and reviewer's verdict, a one-shot
 * delegation or an exploration with whether a whole answer came. The scoreboard and
 * `profile: "auto"` read it. Job folders go with `task_cleanup`; this file keeps what the
 * router learns. Nothing in it leaves the machine.
 */
import { chmodSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { writeFileAtomicSync } from '../util/atomic-write.ts';
import { parseJsonLines } from '../util/read-json.ts';
import { UserError } from '../util/user-error.ts';
import { ProviderError, WorkerFailedError } from '../wire/spec.ts';

/** What kind of work an outcome is of: each is scored apart. */
export type WorkType = 'task' | 'one-shot' | 'explore';

export interface OutcomeRecord {
  /** ISO time the work ended. */
  ts: string;
  work: WorkType;
  /** The project directory the work ran for. */
  project: string;
  profile: string;
  /** The task feature it is scored under (see task-kind.ts): `fix`, `docs`, `agent:reviewer`… */
  kind: string;
  /**
   * true: verified good (tests passed, reviewer passed; for a one-shot or exploration, a whole
   * answer); false: verified bad (tests or review failed, the worker failed, cut off); null:
   * nothing verified it (no test command or reviewer) or it was stopped by someone else.
   */
  passed: boolean | null;
  /** How `passed` was decided: `tests`, `tests+review`, `review`, `answer`, `error`, `none`. */
  by: string;
  costUsd: number;
  ms: number;
  /** Test runs that failed and went back to the worker (tasks). */
  fixRounds?: number;
  /** The answer was cut off at the output limit (one-shots, explorations). */
  cutOff?: boolean;
  taskId?: string;
  /** The task this is an attempt or a rung of. */
  attemptOf?: string;
}

/** O_APPEND keeps lines whole against other appenders while each stays this small. */
const MAX_LINE_BYTES = 3_500;

/**
 * The file's bound (some 8,000 records): past it, the append that crossed it keeps the newest
 * half. The router reads the whole file for each choice, and recent runs say more about a
 * profile than old ones.
 */
export const MAX_OUTCOMES_BYTES = 2_000_000;

export function outcomesPath(dataHome: string): string {
  return join(dataHome, 'outcomes.jsonl');
}

/**
 * Appends one record with one `write` on an O_APPEND handle; the append that takes the file
 * past `maxBytes` then keeps only the newest records that fill half of it.
 */
export async function appendOutcome(
  dataHome: string,
  record: OutcomeRecord,
  maxBytes = MAX_OUTCOMES_BYTES,
): Promise<void> {
  const path = outcomesPath(dataHome);
  await mkdir(dirname(path), { recursive: true });
  let line = `${JSON.stringify(record)}\n`;
  if (Buffer.byteLength(line) > MAX_LINE_BYTES) {
    line = `${JSON.stringify({ ...record, project: record.project.slice(-1_000) })}\n`;
  }
  const file = await open(path, 'a', 0o600);
  let size: number;
  try {
    await file.write(line);
    size = (await file.stat()).size;
  } finally {
    await file.close();
  }
  // Only the append that crosses the bound compacts (a line from another process landing
  // during the rewrite can be lost: a statistic, never a result).
  if (size >= maxBytes && size - Buffer.byteLength(line) < maxBytes) keepNewest(path, maxBytes / 2);
}

/** Rewrites the file with the newest valid records that fit in `bytes`. */
function keepNewest(path: string, bytes: number): void {
  const lines = readOutcomesAt(path).map((record) => `${JSON.stringify(record)}\n`);
  let kept = 0;
  let total = 0;
  while (
    kept < lines.length &&
    total + Buffer.byteLength(lines[lines.length - 1 - kept]!) <= bytes
  ) {
    total += Buffer.byteLength(lines[lines.length - 1 - kept]!);
    kept += 1;
  }
  writeFileAtomicSync(path, lines.slice(lines.length - kept).join(''));
  chmodSync(path, 0o600);
}

/**
 * Records an outcome without ever failing the work it describes: a data home that cannot be
 * written loses the line, not the result.
 */
export async function noteOutcome(dataHome: string, record: OutcomeRecord): Promise<void> {
  await appendOutcome(dataHome, record).catch(() => undefined);
}

/** Every valid record, oldest first; torn or foreign lines are skipped. */
export function readOutcomes(dataHome: string): OutcomeRecord[] {
  return readOutcomesAt(outcomesPath(dataHome));
}

function readOutcomesAt(path: string): OutcomeRecord[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  return parseJsonLines(text, isOutcome);
}

function isOutcome(value: unknown): value is OutcomeRecord {
  if (typeof value !== 'object' || value === null) return false;
  const fields = value as Record<string, unknown>;
  return (
    ['ts', 'work', 'project', 'profile', 'kind', 'by'].every(
      (key) => typeof fields[key] === 'string',
    ) &&
    (fields.passed === true || fields.passed === false || fields.passed === null) &&
    Number.isFinite(fields.costUsd) &&
    Number.isFinite(fields.ms)
  );
}

/**
 * Forgets outcomes: those of `project` (every project when absent), and of `profile` when
 * given. Returns how many records went.
 */
export function resetOutcomes(
  dataHome: string,
  which: { project?: string; profile?: string } = {},
): number {
  const all = readOutcomes(dataHome);
  const isForgotten = (record: OutcomeRecord) =>
    (which.project === undefined || record.project === which.project) &&
    (which.profile === undefined || record.profile === which.profile);
  const kept = all.filter((record) => !isForgotten(record));
  const path = outcomesPath(dataHome);
  if (kept.length === 0) {
    rmSync(path, { force: true });
  } else {
    writeFileAtomicSync(path, kept.map((record) => `${JSON.stringify(record)}\n`).join(''));
    chmodSync(path, 0o600);
  }
  return all.length - kept.length;
}

/**
 * Whether a failed call counts against the worker: its endpoint failed or answered wrong
 * (ProviderError, or anything unexpected), not a refusal of ours (budget, config, input).
 */
export function isWorkerFailure(error: unknown): boolean {
  return (
    error instanceof ProviderError ||
    error instanceof WorkerFailedError ||
    !(error instanceof UserError)
  );
}

/** The project as outcomes name it: its real path (a task's job records the same). */
export function projectKey(projectDir: string): string {
  try {
    return realpathSync(projectDir);
  } catch {
    return projectDir;
  }
}
