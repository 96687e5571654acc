import { hardTimeout, idleTimeout } from './stop-messages.ts';
import { catchUpCost, finishTask, type Outcome } from './finish-task.ts';
import { isTerminal, readJob } from '../store/job-store.ts';
import { isWorkerAlive, killTask } from './task-processes.ts';
import { settleAttempts } from './attempts.ts';
import type { JobFile } from '../store/job-file.ts';

/**
 * Brings a task's state in line with reality whenever someone looks at it: a worker that died
 * makes the task `lost`; one past its hard timeout, or silent past its idle timeout, is killed
 * and the task becomes `timeout`. Work is salvaged either way.
 */
export async function reconcileJob(
  dataHome: string,
  job: JobFile,
  now = Date.now(),
): Promise<JobFile> {
  if (job.attempts) return reconcileAttempts(dataHome, job, now);
  const isEnded = await reconcileWorker(dataHome, job, now);
  // An attempt that ended here may decide its task.
  if (isEnded && job.attemptOf) await settleAttempts(dataHome, job.attemptOf);
  return isEnded ? readJob(dataHome, job.id) : job;
}

/** Ends the task when its worker died or ran over a limit; whether it did. */
async function reconcileWorker(dataHome: string, job: JobFile, now: number): Promise<boolean> {
  if (isTerminal(job.state) || !job.worker) return false;
  let outcome: Outcome | undefined;
  const isAlive = isWorkerAlive(dataHome, job);
  if (!isAlive && job.stopRequested) {
    // Killed by a stop that has not recorded the end yet: it ends as the stop says.
    outcome = { state: 'cancelled', error: job.stopRequested };
  } else if (!isAlive) {
    outcome = {
      state: 'lost',
      error: `the worker process (pid ${job.worker.pid}) died; its work was salvaged`,
    };
  } else if (job.startedAt && now - Date.parse(job.startedAt) > job.timeoutS * 1000) {
    outcome = { state: 'timeout', error: hardTimeout(job) };
  } else if (
    job.state === 'running' &&
    now - Date.parse(job.lastEventAt) > job.idleTimeoutS * 1000
  ) {
    outcome = { state: 'timeout', error: idleTimeout(job) };
  }
  if (!outcome) return false;
  await killTask(dataHome, job);
  // An unreadable ledger must not keep a dead task from ending.
  await catchUpCost(dataHome, job.id).catch(() => undefined);
  await finishTask(dataHome, job.id, outcome);
  return true;
}

/** How long a look at a task waits for a settle of its attempts already in progress elsewhere. */
const LOOK_WAIT_MS = 2_000;

/**
 * A task run as attempts: each attempt's worker checked, then the task settled once from them
 * (shown live, or ended when one won or all ended); a settle in progress elsewhere is not waited
 * for long.
 */
async function reconcileAttempts(dataHome: string, task: JobFile, now: number): Promise<JobFile> {
  if (isTerminal(task.state)) return task;
  for (const attempt of task.attempts ?? []) {
    await reconcileWorker(dataHome, readJob(dataHome, attempt.id), now);
  }
  await settleAttempts(dataHome, task.id, LOOK_WAIT_MS).catch(() => undefined);
  return readJob(dataHome, task.id);
}

export { killTask, processesOfTask, TASK_ID_VARIABLE } from './task-processes.ts';
