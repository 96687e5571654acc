/**
 * Entry of the detached task worker. `dist/task-worker.mjs <task id>` runs that one task;
 * `dist/task-worker.mjs --host` is a task host: it runs every task its server names on its stdin
 * (task-host.ts), side by side, until the server is gone and the last one has ended. Either way a
 * task runs its engine (the lifecycle in run-engine.ts writes job.json and events.jsonl as it
 * goes), then records its result: finished, or failed and salvaged.
 */
import { appendFileSync, existsSync, rmSync, statSync } from 'node:fs';
import { resolveDataHome, type Environment } from '../config/paths.ts';
import { hardTimeout } from './stop-messages.ts';
import type { AppContext } from '../profiles/app-context.ts';
import { serverFromSnapshot } from '../profiles/discover-local.ts';
import { withSandboxLease } from '../sandbox/index.ts';
import { appendEvent, isTerminal, readJob, updateJob } from '../store/job-store.ts';
import { currentProcessIdentity } from '../util/process-identity.ts';
import { errorMessage } from '../util/user-error.ts';
import { TaskError } from '../util/user-error.ts';
import { finishTask } from './finish-task.ts';
import { runEngine } from './run-engine.ts';
import { settleAttempts } from './attempts.ts';
import { spawnWorker, workerLogPath } from './spawn-worker.ts';
import { rememberValidations } from '../profiles/config-validation.ts';
import type { JobFile } from '../store/job-file.ts';
import { resolvePluginRoot } from '../config/plugin-root.ts';
import { heardTask, HOST_ARGUMENT } from './task-host.ts';
import { hostedMarkerPath, stopRequestPath, TASK_ID_VARIABLE } from './task-processes.ts';

/** One task run by this process, alone or in a host. */
interface TaskRun {
  /** Someone else stops the task (and ends it): its work unwinds, its end is left to them. */
  stop(): void;
  /** The task's work is over and it is recording its end (salvaging with git). */
  isEnding(): boolean;
  /** Settles once the task's work, its end and its attempts' settle are all over. */
  done: Promise<void>;
}

/**
 * Runs task `id`: marks it running (a task that ended before its worker came up stays ended),
 * runs its engine under the hard timeout, records the end unless it was stopped, settles its
 * attempts (a ladder's next rung is started here, by the worker of the rung that failed).
 */
function runTask(id: string, dataHome: string, env: Environment, isHosted: boolean): TaskRun {
  const aborter = new AbortController();
  let isStopped = false;
  let isEnding = false;
  const report = (text: string) => {
    if (!isHosted) {
      process.stderr.write(text);
      return;
    }
    try {
      appendFileSync(workerLogPath(dataHome, id), text);
    } catch {
      // The task's folder is gone: nobody would read it.
    }
  };
  const run = async () => {
    const queued = readJob(dataHome, id);
    if (!isHosted) process.chdir(queued.workdir);
    const snapshot = queued.discovered;
    const context: AppContext = {
      // A host runs tasks of any project: each sees its own, as a worker of its own would.
      env: isHosted ? { ...env, CLAUDE_PROJECT_DIR: queued.project, [TASK_ID_VARIABLE]: id } : env,
      projectDir: queued.project,
      dataHome,
      now: () => new Date(),
      pluginRoot: resolvePluginRoot(env, import.meta.url),
      learned: new Map(),
      // The server process's pick, not a new probe that could find another server or model.
      ...(snapshot ? { discover: () => Promise.resolve(serverFromSnapshot(snapshot)) } : {}),
    };
    const worker = { ...currentProcessIdentity(), ...(isHosted ? { hosted: true as const } : {}) };
    const job = await updateJob(dataHome, id, (current) =>
      isTerminal(current.state)
        ? undefined
        : { state: 'running', startedAt: new Date().toISOString(), worker },
    );
    if (isTerminal(job.state)) {
      appendEvent(dataHome, id, 'state', `worker not started: the task is already ${job.state}`);
      return;
    }
    appendEvent(dataHome, id, 'state', `running (pid ${process.pid}${isHosted ? ', hosted' : ''})`);
    if (job.attemptOf) await settleAttempts(dataHome, job.attemptOf).catch(logSettle);
    const deadline = setTimeout(
      () => aborter.abort(new Error('hard timeout')),
      job.timeoutS * 1000,
    );
    try {
      const outcome = await runEngine(job, context, aborter.signal);
      isEnding = true;
      if (!isStopped) await finishTask(dataHome, id, { state: 'done', ...outcome });
    } catch (error) {
      isEnding = true;
      const timedOut = aborter.signal.aborted;
      if (!isStopped)
        await finishTask(dataHome, id, {
          state: timedOut ? 'timeout' : error instanceof TaskError ? error.taskState : 'failed',
          error: timedOut ? hardTimeout(job) : errorMessage(error),
        });
    } finally {
      clearTimeout(deadline);
      // This attempt's end may decide its task: the others are stopped and the winner taken.
      // A ladder's next rung is started here, by the worker of the rung that failed.
      const climb = (rung: JobFile) =>
        spawnWorker(rung, { dataHome, env, workerScript: process.argv[1] ?? '' });
      if (job.attemptOf && !isStopped) {
        await settleAttempts(dataHome, job.attemptOf, undefined, climb).catch(logSettle);
      }
    }
  };
  const logSettle = (error: unknown) =>
    report(`[delegate worker] settling the attempts failed: ${errorMessage(error)}\n`);
  // The task's sandbox session (its proxies keep the process alive) closes with its last task.
  const done = withSandboxLease(run).catch((error: unknown) => {
    report(`[delegate worker] ${String((error as Error).stack ?? error)}\n`);
    process.exitCode = 1;
  });
  return {
    stop: () => {
      if (isStopped || isEnding) return;
      isStopped = true;
      aborter.abort(new Error('stopped'));
    },
    isEnding: () => isEnding,
    done,
  };
}

/**
 * Whoever stops a task (a cancel, another attempt winning, a timeout found on a look) sends a
 * worker of its own SIGTERM, waits a moment, then SIGKILL, and ends the task itself. While the
 * work runs, that moment is used to unwind, so the calls it was billed for reach the ledger and
 * job.json before it goes. Once the worker is ending the task (salvaging with git) it exits at
 * once, as its git commands do: one SIGKILLed later could leave a lock behind in the repository.
 */
function runAlone(id: string): void {
  const env = process.env;
  const task = runTask(id, resolveDataHome(env), env, false);
  process.once('SIGTERM', () => {
    if (task.isEnding()) process.exit(143);
    task.stop();
  });
}

/**
 * A task host: each line `go <id> …` on stdin (task-host.ts) runs that task beside the others.
 * A task is stopped by a request in its folder and SIGUSR2 (task-processes.ts), never by a
 * signal to the host, which runs other tasks. Once stdin ends (the server let it go, or is
 * gone) and its last task has ended, it exits; SIGTERM stops every task first (each is then
 * found ended by a look, and salvaged, as a killed worker's would be).
 */
function runHost(logPath: string | undefined): void {
  const env = process.env;
  const dataHome = resolveDataHome(env);
  const running = new Map<string, TaskRun>();
  let isListening = true;
  const exitWhenIdle = () => {
    if (isListening || running.size > 0) return;
    // A log with nothing in it tells nothing: a host that ran well leaves none.
    if (logPath && isEmptyFile(logPath)) rmSync(logPath, { force: true });
    process.exit();
  };
  const start = (id: string) => {
    if (running.has(id)) return;
    const marker = hostedMarkerPath(dataHome, id);
    // Stopped before it got here: the stopper ends it, and waits for it to be let go.
    if (existsSync(stopRequestPath(dataHome, id))) {
      rmSync(marker, { force: true });
      return;
    }
    const task = runTask(id, dataHome, env, true);
    running.set(id, task);
    void task.done.finally(() => {
      running.delete(id);
      rmSync(marker, { force: true });
      exitWhenIdle();
    });
  };
  // A stop of one task: heard (its request removed) once the task knows it is stopped.
  process.on('SIGUSR2', () => {
    for (const [id, task] of running) {
      const request = stopRequestPath(dataHome, id);
      if (!existsSync(request)) continue;
      task.stop();
      rmSync(request, { force: true });
    }
  });
  process.once('SIGTERM', () => {
    stopListening();
    for (const task of running.values()) task.stop();
    process.exitCode = 143;
    process.once('SIGTERM', () => process.exit(143));
    exitWhenIdle();
  });
  const stdin = process.stdin;
  let heard = '';
  const stopListening = () => {
    if (!isListening) return;
    isListening = false;
    stdin.removeAllListeners();
    // Nothing more comes this way; the tasks' tools get no stdin of the host's.
    stdin.destroy();
  };
  stdin.setEncoding('utf8');
  stdin.on('data', (chunk: string) => {
    heard += chunk;
    for (let end = heard.indexOf('\n'); end >= 0; end = heard.indexOf('\n')) {
      const told = heardTask(heard.slice(0, end));
      heard = heard.slice(end + 1);
      if (!told) continue;
      rememberValidations(told.validated);
      start(told.id);
    }
  });
  const ended = () => {
    stopListening();
    exitWhenIdle();
  };
  stdin.on('end', ended);
  stdin.on('error', ended);
}

function isEmptyFile(path: string): boolean {
  try {
    return statSync(path).size === 0;
  } catch {
    return false;
  }
}

if (process.argv[2] === HOST_ARGUMENT) runHost(process.argv[3]);
else runAlone(process.argv[2] ?? '');
