import type { LoadedConfig } from '../profiles/load-config.ts';
import { budgetStatus } from './budget.ts';
import { readLedger, utcDay, type LedgerRecord } from './ledger.ts';
import { formatUsd } from '../util/format-usd.ts';
import { plural } from '../util/plural.ts';

interface Totals {
  calls: number;
  failed: number;
  /** Failed attempts that were retried (their own ledger records; billed when they reported usage). */
  retried: number;
  costUsd: number;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  cacheWriteTokens: number;
  supervisorTokensAvoided: number;
}

/** The `usage` report: today and/or all time, by profile, with the budget left. */
export function usageReport(
  dataHome: string,
  config: LoadedConfig,
  period: 'today' | 'all' | 'both',
  now: Date,
): string {
  const today = utcDay(now);
  const records = readLedger(dataHome, period === 'today' ? { sinceDay: today } : {});
  const sections: string[] = [];
  if (period !== 'all')
    sections.push(
      section(
        `Today (${today} UTC)`,
        records.filter((record) => utcDay(record.ts) === today),
      ),
    );
  if (period !== 'today') sections.push(section('All time', records));
  sections.push(budgetLine(dataHome, config, now));
  return sections.join('\n\n');
}

function section(title: string, records: readonly LedgerRecord[]): string {
  if (records.length === 0) return `${title}: no calls.`;
  const byProfile = new Map<string, LedgerRecord[]>();
  for (const record of records)
    byProfile.set(record.profile, [...(byProfile.get(record.profile) ?? []), record]);
  const lines = [`${title}: ${describe(totals(records))}`];
  for (const [profile, own] of [...byProfile].sort(([a], [b]) => a.localeCompare(b))) {
    lines.push(`- ${profile}: ${describe(totals(own))}`);
  }
  return [...lines, ...kindLines(records), ...attemptLines(records)].join('\n');
}

const KIND_NAMES: Record<NonNullable<LedgerRecord['kind']>, [one: string, many: string]> = {
  explore: ['exploration', 'explorations'],
  subagent: ['Claude Code subagent run on a worker', 'Claude Code subagents run on workers'],
};

/**
 * Explorations and re-homed subagents apart (they are among the calls above): how many runs,
 * their calls, cost and the supervisor tokens they avoided (what their workers read).
 */
function kindLines(records: readonly LedgerRecord[]): string[] {
  return (Object.keys(KIND_NAMES) as Array<keyof typeof KIND_NAMES>).flatMap((kind) => {
    const own = records.filter((record) => record.kind === kind);
    if (own.length === 0) return [];
    const runs = new Set(own.map((record) => record.runId ?? record.callId)).size;
    const [one, many] = KIND_NAMES[kind];
    return [`- of which ${runs} ${runs === 1 ? one : many}: ${describe(totals(own))}`];
  });
}

/** Tasks shown as attempts shown at most, the latest first. */
const ATTEMPT_TASKS_SHOWN = 5;

/**
 * Tasks that raced several attempts: how many, their cost together, and for the latest each
 * billed attempt's cost and profile (the ledger names the task an attempt belongs to).
 */
function attemptLines(records: readonly LedgerRecord[]): string[] {
  const byTask = new Map<string, LedgerRecord[]>();
  for (const record of records) {
    if (record.attemptOf)
      byTask.set(record.attemptOf, [...(byTask.get(record.attemptOf) ?? []), record]);
  }
  if (byTask.size === 0) return [];
  const all = [...byTask.values()].flat();
  // Only attempts that made a call are in the ledger: no count of attempts is claimed.
  const lines = [
    `- raced as attempts: ${plural(byTask.size, 'task')}, ${formatUsd(totals(all).costUsd)}`,
  ];
  const latest = [...byTask].sort(([, a], [, b]) =>
    (b.at(-1)?.ts ?? '').localeCompare(a.at(-1)?.ts ?? ''),
  );
  for (const [task, own] of latest.slice(0, ATTEMPT_TASKS_SHOWN)) {
    const byAttempt = new Map<string, LedgerRecord[]>();
    for (const record of own) {
      const key = record.taskId ?? '?';
      byAttempt.set(key, [...(byAttempt.get(key) ?? []), record]);
    }
    const parts = [...byAttempt]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(
        ([attempt, calls]) =>
          `${attempt} ${calls[0]?.profile ?? '?'} ${formatUsd(totals(calls).costUsd)}`,
      );
    lines.push(`  ${task}: ${parts.join(', ')}`);
  }
  return lines;
}

function totals(records: readonly LedgerRecord[]): Totals {
  const sum = (pick: (record: LedgerRecord) => number) =>
    records.reduce((total, record) => total + pick(record), 0);
  // A call's attempts share its callId; it failed when none of its records is a success.
  const outcomes = new Map<string, boolean>();
  for (const record of records)
    outcomes.set(record.callId, outcomes.get(record.callId) === true || record.outcome === 'ok');
  return {
    calls: outcomes.size,
    failed: [...outcomes.values()].filter((succeeded) => !succeeded).length,
    retried: records.length - outcomes.size,
    costUsd: sum((record) => record.costUsd),
    inputTokens: sum((record) => record.inputTokens),
    outputTokens: sum((record) => record.outputTokens),
    cachedInputTokens: sum((record) => record.cachedInputTokens),
    cacheWriteTokens: sum((record) => record.cacheWriteTokens ?? 0),
    supervisorTokensAvoided: sum((record) => record.supervisorTokensAvoided),
  };
}

function describe(totals: Totals): string {
  const number = (value: number) => value.toLocaleString('en-US');
  const notes = [
    ...(totals.failed ? [`${totals.failed} failed`] : []),
    ...(totals.retried ? [plural(totals.retried, 'retried attempt')] : []),
  ];
  return [
    `${plural(totals.calls, 'call')}${notes.length ? ` (${notes.join(', ')})` : ''}`,
    formatUsd(totals.costUsd),
    `${number(totals.inputTokens)} in (${number(totals.cachedInputTokens)} cached, ${number(totals.cacheWriteTokens)} written to cache) / ${number(totals.outputTokens)} out tokens`,
    `supervisor tokens avoided ≈ ${number(totals.supervisorTokensAvoided)}`,
  ].join(' · ');
}

function budgetLine(dataHome: string, config: LoadedConfig, now: Date): string {
  const { dailyUsd, perTaskUsd } = config.budget;
  if (dailyUsd === undefined && perTaskUsd === undefined) {
    return 'Budget: none set (add "budget": {"dailyUsd": 5, "perTaskUsd": 1} to config.json to cap spending).';
  }
  const status = budgetStatus(dataHome, config.budget, now);
  const parts = [
    ...(dailyUsd !== undefined
      ? [
          `daily cap ${formatUsd(dailyUsd)}: spent ${formatUsd(status.spentTodayUsd)}, reserved ${formatUsd(status.reservedUsd)}, left ${formatUsd(status.leftTodayUsd ?? 0)}`,
        ]
      : []),
    ...(perTaskUsd !== undefined ? [`per-task cap ${formatUsd(perTaskUsd)}`] : []),
  ];
  return `Budget: ${parts.join('; ')}.`;
}
