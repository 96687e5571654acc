/**
 * Task hosts: one detached worker process that runs many tasks, so that waiting tasks do not
 * each hold a Node process (a waiting task costs the host its conversation, not a runtime).
 *
 * The server keeps one host (`serverHosts`): started at its first `task_start`, loading while
 * that task is prepared, and given every later task and attempt of the session. Each task is
 * a line on the host's stdin (`go <id> …`). The task's guarantees are those of a worker of
 * its own:
 * - it survives the server: the host is detached, and once its stdin ends (the server let it
 *   go, exited or was killed) it runs its tasks to their end, then exits;
 * - a stop is per task: a request file and SIGUSR2 (task-processes.ts), never a signal that
 *   would end the host's other tasks; the task's commands are killed by group and by its id
 *   in their environment, as before;
 * - a host found dead leaves each of its tasks found dead on the next look (the task's
 *   `hosted` marker is still there, its host is not), ended and salvaged one by one.
 * A process that starts a task and goes (the CLI) gets a host for that one task.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { validationsSoFar } from '../profiles/config-validation.ts';
import { isTaskId, isTerminal, readJob } from '../store/job-store.ts';
import type { JobFile } from '../store/job-file.ts';
import { randomBytes } from 'node:crypto';
import {
  recordWorker,
  spawnWorker,
  startWorkerProcess,
  type WorkerLaunch,
} from './spawn-worker.ts';
import { hostedMarkerPath } from './task-processes.ts';

/** The argument that makes `dist/task-worker.mjs` a host (worker-main.ts). */
export const HOST_ARGUMENT = '--host';
/** How long a server's host is kept with no task started on it; then it goes once its tasks end. */
export const HOST_IDLE_MS = 10 * 60_000;
const GO = 'go';

/** A task host process, as the process that started it sees it. */
export interface TaskHost {
  readonly pid: number;
  /** Running and still taking tasks. */
  isOpen(): boolean;
  /** It has been given a task. */
  hasRun(): boolean;
  /**
   * Runs the queued, ready task there. It is recorded in job.json first (from here a cancel or
   * a look finds it); a task ended meanwhile is not given. A host gone meanwhile: the task gets
   * a worker of its own.
   */
  run(job: JobFile): Promise<JobFile>;
  /** It takes no more tasks: it exits once those it runs have ended, at once when it ran none. */
  close(): void;
}

/** Starts a host (it loads its code, then waits for tasks); undefined when no process could start. */
export function spawnTaskHost(launch: WorkerLaunch): TaskHost | undefined {
  if (!launch.workerScript) return undefined;
  const logPath = hostLogPath(launch.dataHome);
  const child = startWorkerProcess([HOST_ARGUMENT, logPath], launch, {
    cwd: launch.dataHome,
    env: {},
    stdin: 'pipe',
    logPath,
  });
  const stdin = child.stdin;
  const pid = child.pid;
  if (pid === undefined || !stdin) {
    rmSync(logPath, { force: true });
    return undefined;
  }
  stdin.on('error', () => undefined);
  let hasExited = false;
  let isClosed = false;
  let hasRun = false;
  child.once('exit', () => {
    hasExited = true;
  });
  const isOpen = () => !hasExited && !isClosed && stdin.writable;
  return {
    pid,
    isOpen,
    hasRun: () => hasRun,
    run: async (job) => {
      const current = readJob(launch.dataHome, job.id);
      if (isTerminal(current.state)) return current;
      if (!isOpen()) return spawnWorker(job, launch);
      hasRun = true;
      // The task is in the host from before anyone can find it recorded there.
      writeFileSync(hostedMarkerPath(launch.dataHome, job.id), '');
      const recorded = await recordWorker(job, launch, pid, true);
      stdin.write(taskLine(job.id));
      return recorded;
    },
    close: () => {
      if (isClosed) return;
      isClosed = true;
      stdin.end();
      if (hasRun) return;
      // It has run nothing (it loads its code, then waits): it goes now, not once it has loaded.
      rmSync(logPath, { force: true });
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    },
  };
}

/**
 * The task's line to its host: its id, with what this process validated of the config (see
 * config-validation.ts), so that the host reads the same files without loading the schemas,
 * unless they changed since.
 */
function taskLine(id: string): string {
  return `${GO} ${id} ${JSON.stringify({ validated: validationsSoFar() })}\n`;
}

/** A task's line as the host heard it: the id, and what came with it; undefined for anything else. */
export function heardTask(line: string): { id: string; validated?: unknown } | undefined {
  const [word, id, ...rest] = line.split(' ');
  if (word !== GO || !id || !isTaskId(id)) return undefined;
  try {
    const told = JSON.parse(rest.join(' ')) as { validated?: unknown } | null;
    return { id, validated: told?.validated };
  } catch {
    // Something unreadable after the id: the host validates for itself.
    return { id };
  }
}

/** Where a host prints (what no task's worker.log takes); it removes the file when empty at its end. */
function hostLogPath(dataHome: string): string {
  const folder = join(dataHome, 'hosts');
  mkdirSync(folder, { recursive: true });
  return join(folder, `${Date.now()}-${randomBytes(4).toString('hex')}.log`);
}

/** The hosts of a long-lived server: one at a time, kept for the next start. */
export interface HostKeeper {
  /** The kept host when it still takes tasks, else a new one (loading while the task is prepared). */
  take(launch: WorkerLaunch): TaskHost | undefined;
  /** A start that failed before its task ran: the host goes too when it has run nothing. */
  release(host: TaskHost): void;
  /** Lets the host go (the server is exiting): it ends its tasks, then exits. Synchronous. */
  close(): void;
}

export function createHostKeeper(idleMs = HOST_IDLE_MS): HostKeeper {
  let kept: { host: TaskHost; launch: WorkerLaunch; timer?: NodeJS.Timeout } | undefined;
  const letGo = () => {
    if (!kept) return;
    clearTimeout(kept.timer);
    kept.host.close();
    kept = undefined;
  };
  return {
    take(launch) {
      const fits =
        kept !== undefined &&
        kept.host.isOpen() &&
        kept.launch.dataHome === launch.dataHome &&
        kept.launch.workerScript === launch.workerScript;
      if (!fits) {
        letGo();
        const host = spawnTaskHost(launch);
        if (!host) return undefined;
        kept = { host, launch };
      }
      const current = kept!;
      clearTimeout(current.timer);
      // Kept while starts come; never what keeps the server alive.
      current.timer = setTimeout(letGo, idleMs);
      current.timer.unref();
      return current.host;
    },
    release(host) {
      if (kept?.host === host && !host.hasRun()) letGo();
    },
    close: letGo,
  };
}

let keeperOfThisProcess: HostKeeper | undefined;

/** The long-lived server's host keeper: made at its first start, lets its host go at exit. */
export function serverHosts(): HostKeeper {
  if (!keeperOfThisProcess) {
    const keeper = createHostKeeper();
    process.once('exit', () => keeper.close());
    keeperOfThisProcess = keeper;
  }
  return keeperOfThisProcess;
}

/**
 * Starts the ready task now: on the server's host when there is a keeper, else on a host of its
 * own that goes once the task has ended. No host could start: a worker of its own.
 */
export async function spawnWorkerNow(
  job: JobFile,
  launch: WorkerLaunch,
  keeper?: HostKeeper,
): Promise<JobFile> {
  const host = keeper ? keeper.take(launch) : spawnTaskHost(launch);
  if (!host) return spawnWorker(job, launch);
  try {
    return await host.run(job);
  } finally {
    if (!keeper) host.close();
  }
}
