/**
 * The scoreboard: what each profile's work came to, from the outcomes this machine recorded
 * (outcomes.ts) — per project, per profile, per task kind — the tasks run, the verified pass
 * rate, the cost per passed task, the median time and fix rounds; for one-shots and
 * explorations, the errors and cut-offs. `providers` shows it briefly, `delegate scoreboard`
 * whole; `profile: "auto"` routes by it (choose-profile.ts).
 */
import { formatUsd } from '../util/format-usd.ts';
import type { OutcomeRecord, WorkType } from './outcomes.ts';
import { plural } from '../util/plural.ts';
import { groupBy } from '../util/group-by.ts';

export interface Score {
  /** Every record counted. */
  runs: number;
  /** Records with a verdict (passed true or false). */
  verified: number;
  passed: number;
  /** What every run cost, verified or not. */
  costUsd: number;
  /** `costUsd / passed`; undefined with no pass. */
  costPerPass?: number;
  medianMs: number;
  medianFixRounds?: number;
  errors: number;
  cutOffs: number;
}

export interface ScoreRow extends Score {
  work: WorkType;
  profile: string;
  /** Absent on a profile's row over every kind. */
  kind?: string;
}

export function score(records: readonly OutcomeRecord[]): Score {
  const verified = records.filter((record) => record.passed !== null);
  const passed = verified.filter((record) => record.passed).length;
  const costUsd = records.reduce((total, record) => total + record.costUsd, 0);
  const fixRounds = records
    .filter((record) => record.work === 'task' && record.passed !== null)
    .map((record) => record.fixRounds ?? 0);
  return {
    runs: records.length,
    verified: verified.length,
    passed,
    costUsd,
    ...(passed > 0 ? { costPerPass: costUsd / passed } : {}),
    medianMs: median(records.map((record) => record.ms)) ?? 0,
    ...(fixRounds.length ? { medianFixRounds: median(fixRounds) } : {}),
    errors: records.filter((record) => record.by === 'error').length,
    cutOffs: records.filter((record) => record.cutOff).length,
  };
}

function median(values: number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? sorted[middle]
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

/** One row per work type and profile, then (with `byKind`) one per kind under it; best first. */
export function scoreRows(
  records: readonly OutcomeRecord[],
  options: { byKind?: boolean } = {},
): ScoreRow[] {
  const groups = groupBy(records, (record) => `${record.work}\u0000${record.profile}`);
  const rows: ScoreRow[] = [];
  for (const group of sortedGroups(groups)) {
    const { work, profile } = group[0]!;
    rows.push({ work, profile, ...score(group) });
    if (!options.byKind) continue;
    for (const kinds of sortedGroups(groupBy(group, (record) => record.kind))) {
      rows.push({ work, profile, kind: kinds[0]!.kind, ...score(kinds) });
    }
  }
  return rows;
}

/** Work types in a fixed order, then the most runs first. */
function sortedGroups(groups: Map<string, OutcomeRecord[]>): OutcomeRecord[][] {
  const order: WorkType[] = ['task', 'explore', 'one-shot'];
  return [...groups.values()].sort(
    (a, b) =>
      order.indexOf(a[0]!.work) - order.indexOf(b[0]!.work) ||
      b.length - a.length ||
      a[0]!.profile.localeCompare(b[0]!.profile),
  );
}

const WORK_WORDS: Record<WorkType, { one: string; many: string; pass: string }> = {
  task: { one: 'task', many: 'tasks', pass: 'passed' },
  'one-shot': { one: 'one-shot', many: 'one-shots', pass: 'answered whole' },
  explore: { one: 'exploration', many: 'explorations', pass: 'answered whole' },
};

export function workWords(work: WorkType): { one: string; many: string; pass: string } {
  return WORK_WORDS[work];
}

/** `9 of 10 verified tasks passed · $0.002 per pass · median 41 s · 0 fix rounds`. */
export function scoreLine(row: ScoreRow): string {
  const words = WORK_WORDS[row.work];
  const parts = [
    row.verified
      ? `${row.passed} of ${row.verified} verified ${row.verified === 1 ? words.one : words.many} ${words.pass}`
      : `${row.runs} ${row.runs === 1 ? words.one : words.many}, none verified`,
    row.costPerPass !== undefined
      ? `${formatUsd(row.costPerPass)} per pass`
      : `${formatUsd(row.costUsd)} spent`,
    `median ${formatSeconds(row.medianMs)}`,
  ];
  if (row.medianFixRounds !== undefined) parts.push(`median fix rounds ${row.medianFixRounds}`);
  if (row.errors) parts.push(plural(row.errors, 'error'));
  if (row.cutOffs) parts.push(`${row.cutOffs} cut off`);
  if (row.verified < row.runs) parts.push(`${row.runs - row.verified} unverified or stopped`);
  return parts.join(' · ');
}

function formatSeconds(ms: number): string {
  return ms >= 60_000 ? `${(ms / 60_000).toFixed(1)} min` : `${(ms / 1000).toFixed(1)} s`;
}

/** The whole scoreboard of `project` (every project when absent), per profile and kind. */
export function scoreboardText(records: readonly OutcomeRecord[], project?: string): string {
  const mine = project === undefined ? records : records.filter((r) => r.project === project);
  const where = project === undefined ? 'every project' : project;
  if (mine.length === 0) {
    return `Scoreboard of ${where}: nothing recorded yet. Tasks with a test_command or definition_of_done, one-shots and explorations add to it as they end.`;
  }
  const lines = [`Scoreboard of ${where} (${mine.length} recorded):`];
  for (const row of scoreRows(mine, { byKind: true })) {
    lines.push(
      row.kind === undefined
        ? `  ${row.profile} · ${WORK_WORDS[row.work].many}: ${scoreLine(row)}`
        : `      ${row.kind}: ${scoreLine(row)}`,
    );
  }
  return lines.join('\n');
}

/** A few lines for `providers`: each profile's tasks in this project; '' with nothing recorded. */
export function scoreboardBrief(records: readonly OutcomeRecord[], project: string): string {
  const rows = scoreRows(records.filter((record) => record.project === project));
  if (rows.length === 0) return '';
  const lines = rows.map(
    (row) => `  ${row.profile} · ${WORK_WORDS[row.work].many}: ${scoreLine(row)}`,
  );
  return `\nScoreboard here (whole: delegate scoreboard):\n${lines.join('\n')}`;
}
