import type { ResolvedProfile } from '../config/resolved-profile.ts';
import { formatBytes } from '../util/format-bytes.ts';
import { inertLine } from '../util/inert-text.ts';
import { formatUsd } from '../util/format-usd.ts';
import { plural } from '../util/plural.ts';

/** What one exploration has done so far: its calls, cost, and what its worker read. */
export interface ExploreTally {
  /** Ties the run's ledger records together. */
  runId: string;
  kind: 'explore' | 'subagent';
  /** The profile that served the last call (a failover may change it). */
  profile: ResolvedProfile;
  started: number;
  calls: number;
  turns: number;
  costUsd: number;
  inputTokens: number;
  outputTokens: number;
  /** Bytes of tool results the worker read: what the supervisor would otherwise have read. */
  bytesRead: number;
  /** Tool-result bytes not yet counted on a ledger line (the next call's). */
  pendingBytes: number;
  filesRead: Set<string>;
  modelAnswered: string;
  /** The worker's latest text, the answer when the run is cut short. */
  lastText: string;
}

const number = (count: number) => count.toLocaleString('en-US');

/**
 * The exploration's one usage line: who answered, the turns, what the worker read (and so the
 * supervisor did not), the tokens, the time and the cost.
 */
export function exploreUsageLine(tally: ExploreTally): string {
  const { profile } = tally;
  const answered = inertLine(tally.modelAnswered, 120);
  const model =
    !tally.modelAnswered || tally.modelAnswered === profile.model
      ? profile.model
      : `${profile.model} (answered by ${answered})`;
  const files = tally.filesRead.size;
  const parts = [
    `profile ${profile.name}`,
    `model ${model}`,
    plural(tally.turns, 'turn'),
    `read ${plural(files, 'file')}, ${formatBytes(tally.bytesRead)} of tool results (≈ ${number(Math.ceil(tally.bytesRead / 4))} tokens you did not read)`,
    `${number(tally.inputTokens)} in / ${number(tally.outputTokens)} out tokens`,
    `${((Date.now() - tally.started) / 1000).toFixed(1)} s`,
    ...(tally.costUsd > 0 ? [formatUsd(tally.costUsd)] : []),
  ];
  return `[${tally.kind === 'subagent' ? 'subagent on a worker' : 'explore'}: ${parts.join(' · ')}]`;
}
