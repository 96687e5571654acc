import { randomUUID } from 'node:crypto';
import { appendLedger } from '../../calls/ledger.ts';
import { errorMessage } from '../../util/user-error.ts';
import type { ResolvedProfile } from '../../config/resolved-profile.ts';
import type { JobFile } from '../../store/job-file.ts';

/**
 * One ledger line per CLI run, with the cost the CLI reported (tokens are not reported by
 * every CLI): `usage` and the daily budget see CLI work beside API calls.
 */
export async function recordRun(
  dataHome: string,
  run: {
    job: JobFile;
    profile: ResolvedProfile;
    started: number;
    costUsd: number;
    error?: unknown;
  },
): Promise<void> {
  await appendLedger(dataHome, {
    ts: new Date().toISOString(),
    callId: randomUUID(),
    profile: run.profile.name,
    format: run.profile.format,
    modelAsked: run.profile.model,
    modelAnswered: '',
    inputTokens: 0,
    outputTokens: 0,
    cachedInputTokens: 0,
    reasoningTokens: 0,
    costUsd: run.costUsd,
    latencyMs: Date.now() - run.started,
    outcome: run.error === undefined ? 'ok' : 'error',
    attempts: 1,
    taskId: run.job.id,
    bytesSent: 0,
    supervisorTokensAvoided: 0,
    ...(run.error !== undefined ? { error: errorMessage(run.error) } : {}),
  }).catch(() => undefined);
}
