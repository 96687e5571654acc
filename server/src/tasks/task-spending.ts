/**
 * The one way a task spends: a slot of its profile's pool, a ledger line per billed call or CLI
 * run (so `usage` and the daily budget see both), the task's own budget, and its cost in
 * job.json through the task's recorder. The builtin loop's model calls go through `callModel`
 * (which holds the slot and writes the ledger per call); a CLI run holds its slots for the whole
 * run and gets one ledger line with the cost the CLI reported.
 */
import { randomUUID } from 'node:crypto';
import { noSlot } from './stop-messages.ts';
import { callModel } from '../calls/call-model.ts';
import { appendLedger } from '../calls/ledger.ts';
import { acquireSlot, type PoolSlot } from '../calls/pool.ts';
import { slotsDir } from '../config/paths.ts';
import type { ResolvedProfile } from '../config/resolved-profile.ts';
import type { AppContext } from '../profiles/app-context.ts';
import { isTerminal } from '../store/job-store.ts';
import type { JobFile } from '../store/job-file.ts';
import { errorMessage, TaskError } from '../util/user-error.ts';
import type { GenerateRequest, GenerateResult } from '../wire/spec.ts';
import type { TaskRecorder } from './task-recorder.ts';

/** Why an attempt's cap is below what the supervisor gave. */
const RUNG_SHARE =
  'This task climbs a ladder of profiles: each rung may spend what the rungs before it left of budget_usd.';
const ATTEMPT_SHARE =
  "This task races several attempts: each one's cap is an equal share of budget_usd.";

/** One model call of the task (pools, budget, ledger), stopping when the task ended. */
export async function callForTask(
  task: { context: AppContext; signal: AbortSignal; recorder: TaskRecorder },
  request: GenerateRequest,
  profile?: string,
): Promise<GenerateResult> {
  const { context, recorder } = task;
  const id = recorder.id;
  const job = recorder.job();
  if (isTerminal(job.state)) throw new Error(`the task is already ${job.state}`);
  const served = await callModel(
    {
      profile: profile ?? job.profile,
      request,
      bytesSent: 0,
      taskId: id,
      ...(job.attemptOf ? { attemptOf: job.attemptOf } : {}),
      signal: task.signal,
      ...(job.budgetUsd !== undefined
        ? {
            taskBudget: {
              capUsd: job.budgetUsd,
              // What job.json holds, and what the recorder has counted but not written yet.
              spentUsd: job.costUsd + recorder.unwrittenCostUsd(),
              ...(job.attemptOf ? { note: job.rung ? RUNG_SHARE : ATTEMPT_SHARE } : {}),
            },
          }
        : {}),
      // Each billed attempt counts as it is billed: a call that ends in an error cost too.
      onSpend: (usd) => recorder.addCost(usd),
      // A full pool is named where the user looks (task_status, the status line).
      onWaiting: (what) => recorder.activity(what ?? 'thinking'),
    },
    context,
  );
  const { modelAnswered, usage } = served.result;
  recorder.modelAnswered(modelAnswered);
  recorder.event('model', `${modelAnswered} ${usage.inputTokens}/${usage.outputTokens} tokens`);
  return served.result;
}

/** A slot of `poolKey` held for a whole CLI run; the task times out when none comes free. */
export async function takeTaskSlot(
  dataHome: string,
  poolKey: string,
  size: number,
  job: JobFile,
  signal: AbortSignal,
): Promise<PoolSlot> {
  const slot = await acquireSlot(slotsDir(dataHome), poolKey, size, {
    waitMs: job.timeoutS * 1000,
    signal,
    label: job.id,
  });
  if (!slot) throw new TaskError(noSlot(poolKey, job.timeoutS), 'timeout');
  return slot;
}

/**
 * One ledger line per CLI run, with the cost the CLI reported (tokens are not reported by
 * every CLI): `usage` and the daily budget see CLI work beside API calls.
 */
export async function recordCliRun(
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
    ...(run.job.attemptOf ? { attemptOf: run.job.attemptOf } : {}),
    bytesSent: 0,
    supervisorTokensAvoided: 0,
    ...(run.error !== undefined ? { error: errorMessage(run.error) } : {}),
  }).catch(() => undefined);
}
