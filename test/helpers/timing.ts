/**
 * Every timing window of the tests — poll deadlines, settle times, bounds on how long a timeout
 * takes to fire, vitest's own timeouts — comes from here, scaled by one factor, so the suite's
 * facts hold on a loaded machine as on an idle one.
 *
 * The factor is `DELEGATE_TEST_TIME_SCALE` (a number ≥ 1), else 2 when `CI` is set (shared,
 * loaded runners), else 1. A window only ever grows: a deadline that passes sooner, or a bound a
 * timeout must beat, is never tightened. What the product itself is told (a task's `timeout_s`,
 * an idle timeout) is not scaled: that is what is under test.
 */

/** The variable that scales every test window (e.g. 3 under `scripts/cpu-load.mjs`). */
export const TIME_SCALE_VARIABLE = 'DELEGATE_TEST_TIME_SCALE';

/** The factor for an environment: the variable when it is a number ≥ 1, else 2 on CI, else 1. */
export function timeScaleOf(env: Record<string, string | undefined>): number {
  const raw = env[TIME_SCALE_VARIABLE]?.trim();
  if (raw) {
    const value = Number(raw);
    if (!Number.isFinite(value) || value < 1) {
      throw new Error(`${TIME_SCALE_VARIABLE}=${raw}: use a number of at least 1, e.g. 2 or 3.`);
    }
    return value;
  }
  const ci = env.CI?.trim().toLowerCase();
  return ci && ci !== 'false' && ci !== '0' ? 2 : 1;
}

/** This run's factor. */
export const TIME_SCALE = timeScaleOf(process.env);

/** A time window of `ms` milliseconds (a deadline, a settle time, a bound), scaled. */
export function scaledMs(ms: number): number {
  return Math.round(ms * TIME_SCALE);
}

/** Waits a scaled settle time: long enough for what should (or should not) happen to show. */
export function settle(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, scaledMs(ms)));
}
