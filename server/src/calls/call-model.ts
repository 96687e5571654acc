import { randomUUID } from 'node:crypto';
import { isCliFormat } from '../config/config-rules.ts';
import { everyProfile, readConfigLazily, type LoadedConfig } from '../profiles/read-config.ts';
import { budgetLockPath, slotsDir } from '../config/paths.ts';
import { knownSecrets } from '../profiles/known-secrets.ts';
import { endpointFor } from '../profiles/profile-endpoint.ts';
import { findProfile, resolveProfile } from '../profiles/resolve-profile.ts';
import { unapprovedError } from '../profiles/project-approval.ts';
import type { AppContext } from '../profiles/app-context.ts';
import { createClient } from '../providers/create-client.ts';
import { isRetryableError } from '../providers/retry.ts';
import {
  ProviderError,
  WorkerFailedError,
  type CallOptions,
  type GenerateRequest,
  type GenerateResult,
  type LearnedFacts,
  type Usage,
} from '../wire/spec.ts';
import { currentProcessIdentity, isProcessAlive } from '../util/process-identity.ts';
import { UserError, errorMessage } from '../util/user-error.ts';
import { fitToTaskBudget, reserveBudget, worstCaseCost } from './budget.ts';
import { withFileLock } from '../util/file-lock.ts';
import { appendLedger, type LedgerRecord } from './ledger.ts';
import { poolKeyOf, poolSizeOf } from './pool-key.ts';
import { acquireSlot, type PoolHolder } from './pool.ts';
import { costOf, priceFor, type Price } from './pricing.ts';
import type { ResolvedProfile } from '../config/resolved-profile.ts';
import { DEFAULT_IDLE_TIMEOUT_MS } from '../wire/http-stream.ts';

/** A full pool as the user reads it: "2 of 2 busy: w t_x, w t_y" (who holds it, when known). */
function busySlots(size: number, holders: readonly PoolHolder[]): string {
  const names = holders.map((holder) => holder.label ?? `pid ${holder.pid}`);
  return `${size} of ${size} busy${names.length ? `: ${names.join(', ')}` : ''}`;
}
const FREE: Price = { inputPerMTok: 0, outputPerMTok: 0 };

export interface ModelCall {
  /** The profile asked for (by name, or already resolved); the default when omitted. */
  profile?: string | ResolvedProfile;
  request: GenerateRequest;
  /** File bytes the worker reads instead of the supervisor (for the ledger). */
  bytesSent: number;
  taskId?: string;
  /** The task that `taskId` is an attempt of (for the ledger). */
  attemptOf?: string;
  /** An exploration's (or a subagent's stand-in's) call, and its run (for the ledger). */
  kind?: LedgerRecord['kind'];
  runId?: string;
  /**
   * A task's whole-run cap and what it has spent so far (its calls run one at a time). The
   * call's output allowance shrinks to fit what is left; a call that cannot fit is refused
   * with a {@link TaskBudgetReached}. Without it, `perTaskUsd` caps each call on its own.
   */
  taskBudget?: { capUsd: number; spentUsd: number; note?: string };
  signal?: AbortSignal;
  /** Timeouts and retry policy (tests shorten them). */
  callOptions?: CallOptions;
  /**
   * Told of every billed attempt as it is billed (a failed one too), so a task counts what a
   * call that ends in an error cost before it went wrong.
   */
  onSpend?: (usd: number) => void;
  /**
   * Told what the call waits for while its profile's pool is full ("waiting for a pool slot on
   * local 127.0.0.1:11434 (2 of 2 busy: t_x, t_y) for 4 s"), then undefined once it has a slot.
   */
  onWaiting?: (what: string | undefined) => void;
}

export interface ModelCallResult {
  result: GenerateResult;
  /** The profile that served the call. */
  profile: ResolvedProfile;
  /** The profile asked for, when the call failed over from it. */
  failedOverFrom?: string;
  /** What the call cost in all: every attempt that reported usage, on every profile it tried. */
  costUsd: number;
}

/**
 * How long a call's pool slot stays with its task after the call (pool.ts, KeptSlot): a turn's
 * quick tools (a read, an edit, a note) take less, so a task's next turn takes no slot anew. A
 * call of another process that waits for the pool gets it first.
 */
const SLOT_KEEP_MS = 50;

/**
 * Every model call goes through here: profile → failover chain → pool slot → budget
 * reservation → the client (with retries) → ledger → settle. A chain moves on when a pool is
 * full or a profile fails with a retryable error; local profiles never leave.
 */
export async function callModel(call: ModelCall, context: AppContext): Promise<ModelCallResult> {
  const config = await readConfigLazily(context.dataHome, context.projectDir, context.env);
  const first =
    typeof call.profile === 'object'
      ? call.profile
      : await resolveProfile(config, call.profile, context.env, context.discover);
  const chain = failoverChain(first, config);
  const passed: string[] = [];
  const billed = { usd: 0 };
  for (const [index, profile] of chain.entries()) {
    const isLast = index === chain.length - 1;
    if (profile.isUnapproved) {
      // A chain may name a profile the user has not approved: it is passed over, never called.
      passed.push(`${profile.name}: ${unapprovedError(profile).message}`);
      if (isLast) throw new UserError(`No profile could take the call (${passed.join('; ')})`);
      continue;
    }
    const poolKey = poolKeyOf(profile);
    const size = poolSizeOf(profile);
    // The wait for a slot is bounded like a silent stream: by the profile's idle limit.
    const waitMs = isLast
      ? profile.idleTimeoutS !== undefined
        ? profile.idleTimeoutS * 1000
        : DEFAULT_IDLE_TIMEOUT_MS
      : 0;
    const waitStarted = Date.now();
    // Who held the pool at the last look; undefined while this call has not waited.
    let holders: PoolHolder[] | undefined;
    const slot = await acquireSlot(slotsDir(context.dataHome), poolKey, size, {
      waitMs,
      keepMs: SLOT_KEEP_MS,
      label: `${profile.name}${call.taskId ? ` ${call.taskId}` : ''}`,
      ...(call.signal ? { signal: call.signal } : {}),
      onFull: (now) => {
        holders = now;
        const waited = Math.round((Date.now() - waitStarted) / 1000);
        call.onWaiting?.(
          `waiting for a pool slot on ${poolKey} (${busySlots(size, now)}) for ${waited} s`,
        );
      },
    });
    if (holders) call.onWaiting?.(undefined);
    if (!slot) {
      // Passed over at once for the next profile, or after waiting the idle limit.
      passed.push(`${profile.name}: pool ${poolKey} full (${busySlots(size, holders ?? [])})`);
      if (isLast)
        throw new UserError(
          `No worker slot came free in ${Math.round(waitMs / 1000)} s (${passed.join('; ')}). ` +
            `Wait for those calls or tasks to end (task_status lists the tasks; task_cancel stops one), raise "pool" in profile ${profile.name} if its server can take more at once, ` +
            `or raise its "idleTimeoutS" to wait longer; delegate doctor checks the endpoint.`,
        );
      continue;
    }
    try {
      const failedOverFrom = profile === first ? undefined : first.name;
      const served = await callProfile(
        profile,
        { ...call, ...(failedOverFrom ? { failedOverFrom } : {}) },
        config,
        { context, billed },
      );
      return {
        result: served,
        costUsd: billed.usd,
        profile,
        ...(profile !== first ? { failedOverFrom: first.name } : {}),
      };
    } catch (error) {
      if (isLast || !isRetryableError(error)) throw describeFailure(profile, error, passed);
      passed.push(`${profile.name}: ${errorMessage(error)}`);
    } finally {
      await slot.release();
    }
  }
  throw new UserError(`No profile could take the call (${passed.join('; ')}).`);
}

/**
 * The profile, then its failover targets — never for a local profile, never to a local one. A
 * target awaiting approval stays in the chain so the call can say why it was passed over.
 */
export function failoverChain(first: ResolvedProfile, config: LoadedConfig): ResolvedProfile[] {
  // A CLI profile's quota is the user's plan: it never fails over, nor is a target.
  if (first.local || isCliFormat(first.format)) return [first];
  const targets = (first.failover ?? []).flatMap((name) => {
    const target = findProfile(config, name);
    return target && !target.local && !isCliFormat(target.format) && target !== first
      ? [target]
      : [];
  });
  return [first, ...targets];
}

/**
 * One profile's try at the call: reservation, the client's attempts (each failed attempt that
 * reported usage gets its own ledger record and cost, and a retry first renews the reservation),
 * the ledger, settle. `billed.usd` grows by every attempt's cost.
 */
async function callProfile(
  profile: ResolvedProfile,
  call: ModelCall & { failedOverFrom?: string },
  config: LoadedConfig,
  { context, billed }: { context: AppContext; billed: { usd: number } },
): Promise<GenerateResult> {
  const endpoint = endpointFor(profile, context.env);
  const price = await knownPrice(profile, config, call.taskBudget !== undefined);
  // Every key this machine could send is cut out of what the endpoint returns (errors of
  // failed attempts included) before the ledger or any caller sees it.
  const client = createClient(
    profile.format,
    {
      ...endpoint,
      ...(profile.promptCache !== undefined ? { promptCache: profile.promptCache } : {}),
      ...(profile.reasoning ? { replayReasoning: profile.reasoning } : {}),
      ...learnedFor(profile, context),
    },
    () => knownSecrets(context.dataHome, [...everyProfile(config), profile], context.env),
  );
  const { taskBudget } = call;
  const isBudgeted =
    taskBudget !== undefined ||
    config.budget.dailyUsd !== undefined ||
    config.budget.perTaskUsd !== undefined;
  // One token per byte of the body as sent bounds what any tokenizer counts. Without the
  // adapter's own count, the request's JSON holds every byte of text sent and more. Measured
  // only under a budget: serialising a long history costs every call of a task otherwise.
  const inputBytes = isBudgeted
    ? (client.requestBytes?.(call.request) ?? Buffer.byteLength(JSON.stringify(call.request)))
    : 0;
  const request = taskBudget
    ? fitToTaskBudget(call.request, price, inputBytes, taskBudget)
    : call.request;
  const reservation = await reserveBudget({
    dataHome: context.dataHome,
    // A task's own cap is whole-run and fitted above; what it leaves caps this call's retries.
    // perTaskUsd per call is for one-shots.
    budget: taskBudget
      ? { dailyUsd: config.budget.dailyUsd, perTaskUsd: taskBudget.capUsd - taskBudget.spentUsd }
      : config.budget,
    worstCaseUsd: worstCaseCost(price, inputBytes, request.maxOutputTokens),
    lock: (action) => withFileLock(budgetLockPath(context.dataHome), action),
    isAlive: (pid, startTime) => isProcessAlive({ pid, startTime }),
    identity: currentProcessIdentity(),
    label: profile.name,
  });
  const started = Date.now();
  const callId = randomUUID();
  const last = { usd: 0, isRecorded: false };
  const onFailedAttempt: CallOptions['onFailedAttempt'] = async ({ error, attempt, willRetry }) => {
    const { usage } = error;
    last.usd = usage ? costOf(price, usage) : 0;
    last.isRecorded = usage !== undefined && !willRetry;
    if (usage) {
      billed.usd += last.usd;
      const outcome = { callId, started, error, usage, costUsd: last.usd, attempts: attempt };
      // The ledger first: it is what budgets count, so a worker stopped in between never
      // leaves billed money out of it.
      await appendLedger(context.dataHome, ledgerRecord(profile, call, outcome));
      call.onSpend?.(last.usd);
    }
    if (willRetry) await reservation.renew(last.usd);
  };
  try {
    const result = await client.generate(request, {
      ...(profile.idleTimeoutS !== undefined ? { idleTimeoutMs: profile.idleTimeoutS * 1000 } : {}),
      ...call.callOptions,
      ...(call.signal ? { signal: call.signal } : {}),
      onFailedAttempt,
    });
    const costUsd = costOf(price, result.usage);
    billed.usd += costUsd;
    await appendLedger(
      context.dataHome,
      ledgerRecord(profile, call, { callId, result, costUsd, started }),
    );
    call.onSpend?.(costUsd);
    await reservation.settle(costUsd);
    return result;
  } catch (error) {
    if (!last.isRecorded) {
      await appendLedger(context.dataHome, ledgerRecord(profile, call, { callId, error, started }));
    }
    await reservation.settle(last.usd);
    throw error;
  }
}

/** The process's memo of what the profile's model turned out to need. */
function learnedFor(profile: ResolvedProfile, context: AppContext): { learned?: LearnedFacts } {
  if (!context.learned) return {};
  const key = `${profile.name}\u0000${profile.model}`;
  let learned = context.learned.get(key);
  if (!learned) context.learned.set(key, (learned = {}));
  return { learned };
}

/** Local profiles are free; with a budget in force, a cloud profile needs a known price. */
async function knownPrice(
  profile: ResolvedProfile,
  config: LoadedConfig,
  taskBudgeted: boolean,
): Promise<Price> {
  const price = await priceFor(profile);
  if (price) return price;
  const budgetInForce =
    taskBudgeted || config.budget.dailyUsd !== undefined || config.budget.perTaskUsd !== undefined;
  if (budgetInForce && !profile.local) {
    throw new UserError(
      `Profile "${profile.name}" (model ${profile.model}) has no known price, and a budget is in force, so its spending ` +
        `could not be capped. Add "price": {"inputPerMTok": …, "outputPerMTok": …} to the profile in ${profile.origin}, ` +
        'or mark it "local": true if it runs on this machine.',
    );
  }
  return FREE;
}

/** A success; or a failed attempt with what it reported and cost; or a failed call. */
type Outcome = { callId: string; started: number } & (
  | { result: GenerateResult; costUsd: number }
  | { error: unknown; usage?: Usage; costUsd?: number; attempts?: number }
);

function ledgerRecord(
  profile: ResolvedProfile,
  call: ModelCall & { failedOverFrom?: string },
  outcome: Outcome,
): LedgerRecord {
  const failed = 'error' in outcome;
  const result = failed ? undefined : outcome.result;
  const usage = failed ? outcome.usage : outcome.result.usage;
  return {
    ts: new Date().toISOString(),
    callId: outcome.callId,
    profile: profile.name,
    format: profile.format,
    modelAsked: profile.model,
    modelAnswered: result?.modelAnswered ?? '',
    inputTokens: usage?.inputTokens ?? 0,
    outputTokens: usage?.outputTokens ?? 0,
    cachedInputTokens: usage?.cachedInputTokens ?? 0,
    cacheWriteTokens: usage?.cacheWriteTokens ?? 0,
    reasoningTokens: usage?.reasoningTokens ?? 0,
    costUsd: outcome.costUsd ?? 0,
    latencyMs: Date.now() - outcome.started,
    outcome: failed ? 'error' : 'ok',
    attempts: failed
      ? (outcome.attempts ?? (outcome.error instanceof ProviderError ? outcome.error.attempts : 1))
      : (result?.attempts ?? 1),
    ...(call.taskId ? { taskId: call.taskId } : {}),
    ...(call.attemptOf ? { attemptOf: call.attemptOf } : {}),
    ...(call.failedOverFrom ? { failedOverFrom: call.failedOverFrom } : {}),
    ...(call.kind ? { kind: call.kind } : {}),
    ...(call.runId ? { runId: call.runId } : {}),
    bytesSent: call.bytesSent,
    supervisorTokensAvoided: failed ? 0 : Math.ceil(call.bytesSent / 4),
    ...(failed ? { error: errorMessage(outcome.error) } : {}),
  };
}

function describeFailure(
  profile: ResolvedProfile,
  error: unknown,
  passed: readonly string[],
): unknown {
  if (!(error instanceof ProviderError)) return error;
  const before = passed.length ? ` (after ${passed.join('; ')})` : '';
  return new WorkerFailedError(
    `Worker profile "${profile.name}" (${profile.format}, model ${profile.model} at ${profile.baseUrl}) failed${before}: ${error.message}`,
  );
}
