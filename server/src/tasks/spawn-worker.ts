import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Environment } from '../config/paths.ts';
import { validationsSoFar } from '../profiles/config-validation.ts';
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
  const log = workerLogPath(context.dataHome, job.id);
  const child = startWorkerProcess(job.id, job.project, job.workdir, context, 'ignore', log);
  return recordWorker(job, context, child.pid);
}

/**
 * The worker of a task that is ready now, started by a process that stays (the server): it
 * hears the word to go at once, and with it what the server validated of the config (see
 * `goLine`), so it need not load the config's schemas. A worker starting a ladder's next rung
 * uses `spawnWorker`: it exits soon after, and a word still in the pipe could go with it.
 */
export async function spawnWorkerNow(job: JobFile, context: WorkerLaunch): Promise<JobFile> {
  const waiting = spawnWaitingWorker(job.id, job.project, context);
  return waiting ? waiting.go(job) : spawnWorker(job, context);
}

/** A worker started before its task is ready, waiting on its stdin for the word to go. */
export interface WaitingWorker {
  /** The task is queued and ready: the worker is recorded in job.json and runs it. */
  go(job: JobFile): Promise<JobFile>;
  /** The start did not complete (refused, failed, cancelled): the worker exits at once. */
  dismiss(): void;
  /** Its process has not exited (nor been dismissed). */
  isAlive(): boolean;
}

/**
 * Starts the worker while the task is still being prepared (its worktree, its snapshot, its
 * preflight), so loading the worker's code overlaps that work. It does nothing until `go`;
 * when the start ends any other way it is killed (`dismiss`), or, when the server dies, exits
 * on the pipe's end without touching the task. Undefined when no process could be started.
 */
export function spawnWaitingWorker(
  id: string,
  project: string,
  context: WorkerLaunch,
  logPath = workerLogPath(context.dataHome, id),
): WaitingWorker | undefined {
  if (!context.workerScript) return undefined;
  const child = startWorkerProcess(id, project, project, context, 'pipe', logPath);
  const stdin = child.stdin;
  if (child.pid === undefined || !stdin) return undefined;
  stdin.on('error', () => undefined);
  const pid = child.pid;
  let hasExited = false;
  child.once('exit', () => {
    hasExited = true;
  });
  let isSettled = false;
  const settle = (word: string) => {
    if (isSettled) return;
    isSettled = true;
    stdin.end(word);
    if (word) return;
    // It has done nothing yet (it loads its code, then waits): it goes now, not once it has loaded.
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  };
  return {
    go: async (job) => {
      const current = readJob(context.dataHome, job.id);
      if (isTerminal(current.state)) {
        settle('');
        return current;
      }
      // Recorded before it runs: from here a cancel or a look finds it.
      const recorded = await recordWorker(job, context, pid);
      settle(goLine());
      return recorded;
    },
    dismiss: () => settle(''),
    isAlive: () => !hasExited && !isSettled,
  };
}

/** Where a task's worker writes what it prints (its stdout and stderr). */
export function workerLogPath(dataHome: string, id: string): string {
  return join(jobDir(dataHome, id), 'worker.log');
}

/** The word a waiting worker starts on, and the argument that makes it wait for it. */
export const WORKER_GO = 'go';
export const WAIT_FOR_GO = '--wait-for-go';

/**
 * The word to go, with what this process validated of the config (see config-validation.ts):
 * the worker reads the same files without loading the schemas, unless they changed since.
 */
function goLine(): string {
  return `${WORKER_GO} ${JSON.stringify({ validated: validationsSoFar() })}\n`;
}

/** What a waiting worker heard: the word, and what came with it (see `goLine`). */
export function heardGo(line: string): { isGo: boolean; validated?: unknown } {
  // The word alone, or with something unreadable after it: the worker validates for itself.
  if (line === WORKER_GO) return { isGo: true };
  if (!line.startsWith(`${WORKER_GO} `)) return { isGo: false };
  try {
    const told = JSON.parse(line.slice(WORKER_GO.length + 1)) as { validated?: unknown } | null;
    return { isGo: true, validated: told?.validated };
  } catch {
    return { isGo: true };
  }
}

/**
 * V8 flags of every task worker. A worker spends its life waiting on its model, so its heap
 * favours size: about 3 MB less resident and private memory per waiting worker, turns no
 * slower (`npm run bench -- workermemory tasks`). Flags that also stop the optimising compiler
 * saved 4 MB more but ran a worker's heavier JavaScript (big tool outputs) 2.5 times slower.
 */
const WORKER_NODE_FLAGS = ['--optimize-for-size'];

function startWorkerProcess(
  id: string,
  project: string,
  cwd: string,
  context: WorkerLaunch,
  stdin: 'ignore' | 'pipe',
  logPath: string,
) {
  const log = openSync(logPath, 'a');
  const args = [
    ...WORKER_NODE_FLAGS,
    context.workerScript ?? '',
    id,
    ...(stdin === 'pipe' ? [WAIT_FOR_GO] : []),
  ];
  const child = spawn(process.execPath, args, {
    cwd,
    env: {
      ...context.env,
      DELEGATE_HOME: context.dataHome,
      CLAUDE_PROJECT_DIR: project,
      [TASK_ID_VARIABLE]: id,
    },
    detached: true,
    stdio: [stdin, log, log],
  });
  // The child has its own copy of the log; the server keeps no descriptor per task.
  closeSync(log);
  child.on('error', () => undefined);
  child.unref();
  return child;
}

async function recordWorker(
  job: JobFile,
  context: WorkerLaunch,
  pid: number | undefined,
): Promise<JobFile> {
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
