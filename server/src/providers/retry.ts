import { ProviderError, type CallOptions, type RetryPolicy } from '../wire/spec.ts';
import { plural } from '../util/plural.ts';

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 4,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  maxWaitMs: 60_000,
};

const RETRYABLE_STATUS = new Set([408, 409, 425, 429, 500, 502, 503, 504, 529]);

/** Whether another attempt can help, and how many attempts this kind of failure deserves. */
function attemptsFor(error: unknown, policy: RetryPolicy): number {
  if (!(error instanceof ProviderError)) return 1;
  switch (error.kind) {
    case 'http':
      return error.status !== undefined &&
        (RETRYABLE_STATUS.has(error.status) || error.status >= 500)
        ? policy.maxAttempts
        : 1;
    // Nothing listens: one quick second try covers a server that is restarting.
    case 'refused':
      return Math.min(2, policy.maxAttempts);
    case 'unreachable':
    case 'protocol':
      return policy.maxAttempts;
    // A stall already cost the whole idle limit: another wait on the same endpoint would
    // multiply it (4 × 300 s before the first word), so it is reported at once.
    case 'stalled':
      return 1;
    default:
      return 1;
  }
}

/**
 * A failure another attempt or another endpoint might get past: 429, 5xx, cut streams; and a
 * stall, which is not retried on the same endpoint but may fail over to another.
 */
export function isRetryableError(error: unknown): boolean {
  if (error instanceof ProviderError && error.kind === 'stalled') return true;
  return attemptsFor(error, DEFAULT_RETRY_POLICY) > 1;
}

/**
 * Runs `attempt` until it succeeds, a failure is not retryable, the attempts are spent or
 * the wait budget is; honours the endpoint's Retry-After, else jittered exponential backoff.
 * The last error is thrown with the number of attempts made. `onFailedAttempt` hears of every
 * failed attempt (with the usage it reported) before the next one starts.
 */
export async function withRetries<T>(
  attempt: (attemptNumber: number) => Promise<T>,
  policy: RetryPolicy,
  signal?: AbortSignal,
  onFailedAttempt?: CallOptions['onFailedAttempt'],
): Promise<{ value: T; attempts: number }> {
  let waited = 0;
  for (let attemptNumber = 1; ; attemptNumber += 1) {
    try {
      return { value: await attempt(attemptNumber), attempts: attemptNumber };
    } catch (error) {
      const allowed = attemptsFor(error, policy);
      const delay = delayFor(error, attemptNumber, policy);
      const outOfBudget = waited + delay > policy.maxWaitMs;
      const isLast = attemptNumber >= allowed || outOfBudget || signal?.aborted === true;
      if (isLast && error instanceof ProviderError) {
        error.attempts = attemptNumber;
        if (outOfBudget && attemptNumber < allowed) {
          error.message += ` (gave up: the endpoint asked to wait ${Math.round(delay / 1000)} s, over the ${Math.round(policy.maxWaitMs / 1000)} s retry budget)`;
        } else if (attemptNumber > 1) {
          error.message += ` (after ${plural(attemptNumber, 'attempt')})`;
        }
      }
      if (error instanceof ProviderError && onFailedAttempt) {
        await onFailedAttempt({ error, attempt: attemptNumber, willRetry: !isLast });
      }
      if (isLast) throw error;
      waited += delay;
      await sleep(delay, signal);
    }
  }
}

function delayFor(error: unknown, attemptNumber: number, policy: RetryPolicy): number {
  const asked = error instanceof ProviderError ? error.retryAfterMs : undefined;
  if (asked !== undefined) return asked;
  const exponential = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attemptNumber - 1));
  // Full jitter between half and all of the step, so many clients do not retry in lockstep.
  return Math.round(exponential / 2 + Math.random() * (exponential / 2));
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
