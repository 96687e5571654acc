import { readFileSync, readdirSync } from 'node:fs';
import { killProcessGroup } from '../agent/worker-tools/index.ts';
import { isProcessAlive } from '../util/process-identity.ts';
import { finishTask, type Outcome } from './finish-task.ts';
import { isTerminal, readJob, type JobFile } from './job-store.ts';

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

/**
 * Kills the worker's process group (only while that very process lives: a reused pid is left
 * alone), every command group it recorded, and — since a command may start between the worker
 * spawning it and recording it — every process that carries the task's id in its environment.
 */
export async function killTask(job: JobFile): Promise<void> {
  const workerAlive = job.worker !== undefined && isProcessAlive(job.worker);
  const groups = [
    ...(workerAlive && job.worker ? [job.worker.pid] : []),
    ...(job.childPgids ?? []),
  ];
  await Promise.all(groups.map((pgid) => killProcessGroup(pgid)));
  for (const pid of processesOfTask(job.id)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
}

/** Set in the environment of the worker and of everything it runs, so the whole tree can be found. */
export const TASK_ID_VARIABLE = 'DELEGATE_TASK_ID';

/** Processes whose environment holds DELEGATE_TASK_ID=<id> (Linux /proc; none elsewhere). */
export function processesOfTask(id: string): number[] {
  const marker = `\0${TASK_ID_VARIABLE}=${id}\0`;
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  } catch {
    return [];
  }
  return entries.flatMap((entry) => {
    try {
      return `\0${readFileSync(`/proc/${entry}/environ`, 'latin1')}\0`.includes(marker)
        ? [Number(entry)]
        : [];
    } catch {
      return [];
    }
  });
}
