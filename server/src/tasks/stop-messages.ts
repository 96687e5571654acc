/**
 * Why a task stopped on a limit, each ending with the next step: the knob to turn, what to
 * check, where the work is. One place, so that no stall or timeout reads as a dead end.
 */
import type { JobFile } from '../store/job-file.ts';

const SALVAGED = 'what it did is salvaged (task_result)';

/** Past `timeout_s`. */
export function hardTimeout(job: Pick<JobFile, 'timeoutS'>): string {
  return `hard timeout: ran longer than ${job.timeoutS} s; ${SALVAGED}. Start it again with a larger timeout_s, or split the task`;
}

/** Nothing happened for the profile's idle limit (the endpoint or the worker went quiet). */
export function idleTimeout(
  job: Pick<JobFile, 'idleTimeoutS' | 'activity' | 'profile' | 'modelAnswered'>,
): string {
  const last = job.activity ? `last: ${job.activity}; ` : '';
  const profile = job.profile ?? 'default';
  return (
    `idle timeout: no activity for ${job.idleTimeoutS} s (${last}profile ${profile}${job.modelAnswered ? `, model ${job.modelAnswered}` : ''}); ${SALVAGED}. ` +
    `Check the endpoint with delegate doctor; if the model is just slow, raise "idleTimeoutS" in profile ${profile}`
  );
}

/** A CLI engine printed nothing for its idle limit. */
export function cliIdleTimeout(binary: string, idleTimeoutS: number, profile: string): string {
  return (
    `idle timeout: ${binary} printed nothing for ${idleTimeoutS} s and was killed with its processes; ${SALVAGED}. ` +
    `Run ${binary} by hand to see whether it waits for a login or a prompt (delegate doctor checks it); if it is just slow, raise "idleTimeoutS" in profile ${profile}`
  );
}

/** No slot of a CLI's or a runner's pool came free within the task's time. */
export function noSlot(poolKey: string, timeoutS: number): string {
  return (
    `no ${poolKey} slot came free within the task's ${timeoutS} s: the other tasks holding it ran all along (task_status lists them). ` +
    'Wait for them or cancel one (task_cancel), or raise "pool" (a CLI profile) or "maxTasks" (a runner)'
  );
}
