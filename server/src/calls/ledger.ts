/**
 * The ledger: one JSON line per model call in `<dataHome>/ledger/<YYYY-MM-DD>.jsonl` (UTC day
 * the call ended), plus one per failed attempt that reported usage (it is billed all the same),
 * sharing the call's `callId`. Every session on the machine appends to the same files; budgets, the
 * `usage` tool and the status line read them.
 */
import { appendFileSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseJsonLines } from '../util/read-json.ts';
import { UserError } from '../util/user-error.ts';

export interface LedgerRecord {
  /** ISO time the call ended. */
  ts: string;
  callId: string;
  profile: string;
  format: string;
  modelAsked: string;
  modelAnswered: string;
  /** Token fields follow the provider `Usage` convention: input includes the cached parts. */
  inputTokens: number;
  outputTokens: number;
  /** Input tokens read from the prompt cache. */
  cachedInputTokens: number;
  /** Input tokens written to the prompt cache (absent in records from before it was kept). */
  cacheWriteTokens?: number;
  reasoningTokens: number;
  /** 0 for local; for a failed attempt, what its reported usage costs (0 when it reported none). */
  costUsd: number;
  latencyMs: number;
  outcome: 'ok' | 'error';
  /** Attempts the call had made when this record was written (a failed attempt's own number). */
  attempts: number;
  taskId?: string;
  /** The task that `taskId` is one of several racing attempts of. */
  attemptOf?: string;
  /** File bytes the worker read instead of the supervisor. */
  bytesSent: number;
  /** Estimate: ceil(bytesSent / 4). */
  supervisorTokensAvoided: number;
  failedOverFrom?: string;
  error?: string;
  /**
   * A call of a read-only exploration (`explore`), or of one standing in for a Claude Code
   * subagent (`subagent`); absent for one-shot and task calls. `runId` ties one run's calls.
   */
  kind?: 'explore' | 'subagent';
  runId?: string;
}

/**
 * O_APPEND makes one `write` of a line atomic against other appenders only while lines stay
 * small (PIPE_BUF-sized on the file systems that matter); keep well under 4 KB.
 */
const MAX_LINE_BYTES = 3_500;
const MAX_ERROR_CHARS = 500;
const MAX_FIELD_CHARS = 120;
const LEDGER_FILE = /^\d{4}-\d{2}-\d{2}\.jsonl$/;

const STRING_FIELDS = ['ts', 'callId', 'profile', 'format', 'modelAsked', 'modelAnswered'];
const NUMBER_FIELDS = [
  'inputTokens',
  'outputTokens',
  'cachedInputTokens',
  'reasoningTokens',
  'costUsd',
  'latencyMs',
  'attempts',
  'bytesSent',
  'supervisorTokensAvoided',
];

export function ledgerDir(dataHome: string): string {
  return join(dataHome, 'ledger');
}

/** The UTC day (YYYY-MM-DD) of an ISO time or date. */
export function utcDay(time: string | Date): string {
  return new Date(time).toISOString().slice(0, 10);
}

/** Appends one record as one line with one `write` on an O_APPEND handle, so lines never interleave. */
export function appendLedger(dataHome: string, record: LedgerRecord): Promise<void> {
  // Synchronous: one small append costs less than the thread pool's four round trips (a task
  // worker writes one per model call), and the line is on disk before the call's answer is used.
  try {
    const dir = ledgerDir(dataHome);
    const file = join(dir, `${utcDay(record.ts)}.jsonl`);
    const line = ledgerLine(record);
    try {
      appendFileSync(file, line, { mode: 0o600 });
    } catch (error) {
      // The folder is made when it is missing (the first call, or after a purge), not each time.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      mkdirSync(dir, { recursive: true });
      appendFileSync(file, line, { mode: 0o600 });
    }
    return Promise.resolve();
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}

/** The record as one short line: the error first, then (pathological names) every string clipped. */
function ledgerLine(record: LedgerRecord): string {
  const shortened =
    record.error === undefined ? record : { ...record, error: clip(record.error, MAX_ERROR_CHARS) };
  const line = `${JSON.stringify(shortened)}\n`;
  if (Buffer.byteLength(line) <= MAX_LINE_BYTES) return line;
  const clipped = Object.fromEntries(
    Object.entries(shortened).map(([key, value]) => [
      key,
      typeof value === 'string' ? clip(value, MAX_FIELD_CHARS) : value,
    ]),
  );
  return `${JSON.stringify(clipped)}\n`;
}

function clip(text: string, maxChars: number): string {
  return text.length <= maxChars ? text : `${text.slice(0, maxChars - 1)}…`;
}

/** What the ledger holds as billed to task `taskId` (started at `startedAt`). */
export function billedToTask(dataHome: string, taskId: string, startedAt: string): number {
  return readLedger(dataHome, { sinceDay: utcDay(startedAt) })
    .filter((record) => record.taskId === taskId)
    .reduce((total, record) => total + record.costUsd, 0);
}

/** Every valid record, oldest day first, from `sinceDay` (YYYY-MM-DD, UTC) on; torn lines are skipped. */
export function readLedger(dataHome: string, options: { sinceDay?: string } = {}): LedgerRecord[] {
  const dir = ledgerDir(dataHome);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const since = options.sinceDay ? `${options.sinceDay}.jsonl` : '';
  return names
    .filter((name) => LEDGER_FILE.test(name) && name >= since)
    .sort()
    .flatMap((name) => parseLines(readLedgerFile(join(dir, name))));
}

/** A day's file; one that cannot be read stops the reader with the file named (spend is unknown). */
function readLedgerFile(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const what =
      code === 'EISDIR'
        ? 'is a directory, not a file'
        : `cannot be read (${code ?? (error as Error).message})`;
    throw new UserError(
      `The ledger file ${file} ${what}, so spending and budgets cannot be counted. ` +
        `Move it away (mv ${file} ${file}.broken) or fix its permissions, then call again; the calls it recorded are then no longer counted.`,
    );
  }
}

const parseLines = (text: string) => parseJsonLines(text, isLedgerRecord);

function isLedgerRecord(value: unknown): value is LedgerRecord {
  if (typeof value !== 'object' || value === null) return false;
  const fields = value as Record<string, unknown>;
  return (
    STRING_FIELDS.every((key) => typeof fields[key] === 'string') &&
    NUMBER_FIELDS.every((key) => Number.isFinite(fields[key])) &&
    (fields.cacheWriteTokens === undefined || Number.isFinite(fields.cacheWriteTokens)) &&
    (fields.outcome === 'ok' || fields.outcome === 'error')
  );
}
