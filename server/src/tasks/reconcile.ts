import { isProcessAlive } from '../util/process-identity.ts';
import { finishTask, type Outcome } from './finish-task.ts';
import { isTerminal, readJob } from '../store/job-store.ts';
import { killTask } from './task-processes.ts';
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
  if (isTerminal(job.state) || !job.worker) return job;
  let outcome: Outcome | undefined;
  if (!isProcessAlive(job.worker)) {
    outcome = {
      state: 'lost',
      error: `the worker process (pid ${job.worker.pid}) died; its work was salvaged`,
    };
  } else if (job.startedAt && now - Date.parse(job.startedAt) > job.timeoutS * 1000) {
    outcome = { state: 'timeout', error: `hard timeout: ran longer than ${job.timeoutS} s` };
  } else if (
    job.state === 'running' &&
    now - Date.parse(job.lastEventAt) > job.idleTimeoutS * 1000
  ) {
    const last = job.activity ? `last: ${job.activity}; ` : '';
    outcome = {
      state: 'timeout',
      error: `idle timeout: no activity for ${job.idleTimeoutS} s (${last}profile ${job.profile ?? 'default'}${job.modelAnswered ? `, model ${job.modelAnswered}` : ''})`,
    };
  }
  if (!outcome) return job;
  await killTask(job);
  await finishTask(dataHome, job.id, outcome);
  return readJob(dataHome, job.id);
}

export { killTask, processesOfTask, TASK_ID_VARIABLE } from './task-processes.ts';
