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
 * A worker of the task's own (where no task host runs it: a ladder's next rung, started by the
 * worker of the rung before; a host gone before its task): detached in its own process group,
 * so it outlives the server and can be killed whole. A task cancelled while it was being
 * prepared gets none; a worker that cannot start (its directory gone meanwhile) fails the
 * task, never the server.
 */
export async function spawnWorker(job: JobFile, context: WorkerLaunch): Promise<JobFile> {
  if (!context.workerScript) throw new Error('the task worker script is not configured');
  const current = readJob(context.dataHome, job.id);
  if (isTerminal(current.state)) return current;
  const child = startWorkerProcess([job.id], context, {
    cwd: job.workdir,
    env: { CLAUDE_PROJECT_DIR: job.project, [TASK_ID_VARIABLE]: job.id },
    stdin: 'ignore',
    logPath: workerLogPath(context.dataHome, job.id),
  });
  return recordWorker(job, context, child.pid);
}

/** Where a task's worker writes what it prints (its stdout and stderr). */
export function workerLogPath(dataHome: string, id: string): string {
  return join(jobDir(dataHome, id), 'worker.log');
}

/**
 * V8 flags of every task worker. A worker spends its life waiting on its model, so its heap
 * favours size: about 3 MB less resident and private memory per waiting worker, turns no
 * slower (`npm run bench -- workermemory tasks`). Flags that also stop the optimising compiler
 * saved 4 MB more but ran a worker's heavier JavaScript (big tool outputs) 2.5 times slower.
 */
const WORKER_NODE_FLAGS = ['--optimize-for-size'];

/** Starts `dist/task-worker.mjs <args>` detached, in its own process group, printing to `logPath`. */
export function startWorkerProcess(
  args: string[],
  context: WorkerLaunch,
  options: { cwd: string; env: Environment; stdin: 'ignore' | 'pipe'; logPath: string },
) {
  const log = openSync(options.logPath, 'a');
  const child = spawn(
    process.execPath,
    [...WORKER_NODE_FLAGS, context.workerScript ?? '', ...args],
    {
      cwd: options.cwd,
      env: { ...context.env, DELEGATE_HOME: context.dataHome, ...options.env },
      detached: true,
      stdio: [options.stdin, log, log],
    },
  );
  // The child has its own copy of the log; the server keeps no descriptor per task.
  closeSync(log);
  child.on('error', () => undefined);
  child.unref();
  return child;
}

/** The worker (or the host, `isHosted`) that runs the task, in job.json: from here a cancel or a look finds it. */
export async function recordWorker(
  job: JobFile,
  context: WorkerLaunch,
  pid: number | undefined,
  isHosted = false,
): Promise<JobFile> {
  if (pid === undefined) {
    await finishTask(context.dataHome, job.id, {
      state: 'failed',
      error: `the task worker process could not start in ${job.workdir}`,
    });
    return readJob(context.dataHome, job.id);
  }
  return updateJob(context.dataHome, job.id, () => ({
    worker: { pid, startTime: startTimeOf(pid), ...(isHosted ? { hosted: true as const } : {}) },
  }));
}

function startTimeOf(pid: number): string {
  try {
    return parseProcessStat(readFileSync(`/proc/${pid}/stat`, 'utf8'))?.startTime ?? '';
  } catch {
    return '';
  }
}
