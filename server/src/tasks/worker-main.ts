/**
 * Entry of the detached task worker (dist/task-worker.mjs <task id>): runs the task's engine in
 * the task's directory (the lifecycle in run-engine.ts writes job.json and events.jsonl as it
 * goes), then records the result: finished, or failed and salvaged.
 */
import { rmSync } from 'node:fs';
import { resolveDataHome } from '../config/paths.ts';
import { hardTimeout } from './stop-messages.ts';
import type { AppContext } from '../profiles/app-context.ts';
import { serverFromSnapshot } from '../profiles/discover-local.ts';
import { closeSandbox } from '../sandbox/index.ts';
import { appendEvent, isTerminal, readJob, updateJob } from '../store/job-store.ts';
import { currentProcessIdentity } from '../util/process-identity.ts';
import { errorMessage } from '../util/user-error.ts';
import { TaskError } from '../util/user-error.ts';
import { finishTask } from './finish-task.ts';
import { runEngine } from './run-engine.ts';
import { settleAttempts } from './attempts.ts';
import { heardGo, spawnWorker, WAIT_FOR_GO } from './spawn-worker.ts';
import { rememberValidations } from '../profiles/config-validation.ts';
import { standbyLogPath } from './standby-worker.ts';
import type { JobFile } from '../store/job-file.ts';
import { resolvePluginRoot } from '../config/plugin-root.ts';

async function main(id: string): Promise<void> {
  // Started while its task was being prepared: it runs once the server says go, else not at all.
  const env = process.env;
  const dataHome = resolveDataHome(env);
  if (process.argv[3] === WAIT_FOR_GO && !(await isToldToGo())) {
    // A standby let go (or whose server is gone) leaves no log behind.
    rmSync(standbyLogPath(dataHome, id), { force: true });
    return;
  }
  const queued = readJob(dataHome, id);
  process.chdir(queued.workdir);
  const snapshot = queued.discovered;
  const context: AppContext = {
    env,
    projectDir: queued.project,
    dataHome,
    now: () => new Date(),
    pluginRoot: resolvePluginRoot(env, import.meta.url),
    learned: new Map(),
    // The server process's pick, not a new probe that could find another server or model.
    ...(snapshot ? { discover: () => Promise.resolve(serverFromSnapshot(snapshot)) } : {}),
  };
  const aborter = new AbortController();
  // A task that ended before its worker came up (cancelled during its preflight) stays ended.
  const job = await updateJob(dataHome, id, (current) =>
    isTerminal(current.state)
      ? undefined
      : { state: 'running', startedAt: new Date().toISOString(), worker: currentProcessIdentity() },
  );
  if (isTerminal(job.state)) {
    appendEvent(dataHome, id, 'state', `worker not started: the task is already ${job.state}`);
    return;
  }
  appendEvent(dataHome, id, 'state', `running (pid ${process.pid})`);
  if (job.attemptOf) await settleAttempts(dataHome, job.attemptOf).catch(logSettle);
  const deadline = setTimeout(() => aborter.abort(new Error('hard timeout')), job.timeoutS * 1000);
  // Whoever stops a task (a cancel, another attempt winning, a timeout found on a look) sends
  // SIGTERM, waits a moment, then SIGKILL, and ends the task itself. While the work runs, that
  // moment is used to unwind, so the calls it was billed for reach the ledger and job.json
  // before it goes. Once the worker is ending the task (salvaging with git) it exits at once,
  // as its git commands do: one SIGKILLed later could leave a lock behind in the repository.
  let isStopped = false;
  let isEnding = false;
  process.once('SIGTERM', () => {
    if (isEnding) process.exit(143);
    isStopped = true;
    aborter.abort(new Error('stopped'));
  });
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
    // The sandbox's proxies would keep the worker alive after the task.
    await closeSandbox();
  }
}

/** The server's word on stdin; its end without the word (a start that failed, a server gone) is a no. */
function isToldToGo(): Promise<boolean> {
  return new Promise((resolve) => {
    let heard = '';
    const stdin = process.stdin;
    const done = (isGo: boolean) => {
      stdin.removeAllListeners();
      // Nothing more comes this way; the task's tools get no stdin of the worker's.
      stdin.destroy();
      resolve(isGo);
    };
    stdin.setEncoding('utf8');
    stdin.on('data', (chunk: string) => {
      heard += chunk;
      if (!heard.includes('\n')) return;
      const told = heardGo(heard.split('\n')[0] ?? '');
      rememberValidations(told.validated);
      done(told.isGo);
    });
    stdin.on('end', () => done(false));
    stdin.on('error', () => done(false));
  });
}

function logSettle(error: unknown): void {
  process.stderr.write(`[delegate worker] settling the attempts failed: ${errorMessage(error)}\n`);
}

const id = process.argv[2] ?? '';
main(id).catch((error: unknown) => {
  process.stderr.write(`[delegate worker] ${String((error as Error).stack ?? error)}\n`);
  process.exitCode = 1;
});
