import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Environment } from '../config/paths.ts';
import { isTerminal, jobDir, readJob, updateJob } from '../store/job-store.ts';
import type { JobFile } from '../store/job-file.ts';
import { parseProcessStat } from '../util/process-identity.ts';
import { finishTask } from './finish-task.ts';
import { TASK_ID_VARIABLE } from './task-processes.ts';

/** What starting a worker takes: the data home, the environment it inherits, the worker script. */
export interface WorkerLaunch {
  dataHome: string;
  env: Environment;
  /** The bundled task worker (dist/task-worker.mjs). */
  workerScript?: string;
}

/**
 * The worker runs detached in its own process group, so it outlives the server and can be
 * killed whole. A task cancelled while it was being prepared gets none; a worker that cannot
 * start (its directory gone meanwhile) fails the task, never the server.
 */
export async function spawnWorker(job: JobFile, context: WorkerLaunch): Promise<JobFile> {
  if (!context.workerScript) throw new Error('the task worker script is not configured');
  const current = readJob(context.dataHome, job.id);
  if (isTerminal(current.state)) return current;
  const log = openSync(join(jobDir(context.dataHome, job.id), 'worker.log'), 'a');
  const child = spawn(process.execPath, [context.workerScript, job.id], {
    cwd: job.workdir,
    env: {
      ...context.env,
      DELEGATE_HOME: context.dataHome,
      CLAUDE_PROJECT_DIR: job.project,
      [TASK_ID_VARIABLE]: job.id,
    },
    detached: true,
    stdio: ['ignore', log, log],
  });
  // The child has its own copy of the log; the server keeps no descriptor per task.
  closeSync(log);
  child.on('error', () => undefined);
  child.unref();
  const pid = child.pid;
  if (pid === undefined) {
    await finishTask(context.dataHome, job.id, {
      state: 'failed',
      error: `the task worker process could not start in ${job.workdir}`,
    });
    return readJob(context.dataHome, job.id);
  }
  return updateJob(context.dataHome, job.id, () => ({
    worker: { pid, startTime: startTimeOf(pid) },
  }));
}

function startTimeOf(pid: number): string {
  try {
    return parseProcessStat(readFileSync(`/proc/${pid}/stat`, 'utf8'))?.startTime ?? '';
  } catch {
    return '';
  }
}
