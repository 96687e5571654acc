/**
 * Entry of the detached task worker (dist/task-worker.mjs <task id>): runs the builtin agent
 * in the task's directory, writes job.json and events.jsonl as it goes, verifies, salvages and
 * records the result. The MCP server only spawns it and reads its files.
 */
import { mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { runAgentLoop } from '../agent/agent-loop.ts';
import { findAgent, pluginRootFrom } from '../agent/agents.ts';
import { FILE_AND_SHELL_TOOLS, installGitGuard, workerEnv } from '../agent/worker-tools/index.ts';
import { resolveDataHome } from '../config/paths.ts';
import { callModel } from '../engine/call-model.ts';
import type { EngineContext } from '../engine-context.ts';
import type { GenerateRequest } from '../providers/spec.ts';
import { currentProcessIdentity } from '../util/process-identity.ts';
import { errorMessage } from '../util/user-error.ts';
import { finishTask } from './finish-task.ts';
import { appendEvent, isTerminal, jobDir, readJob, updateJob, type JobFile } from './job-store.ts';
import { takeMessages } from './mailbox.ts';
import { TASK_ID_VARIABLE } from './reconcile.ts';
import { runTestCommand } from './verify.ts';
import { workerPrompt } from './worker-prompt.ts';

const VERIFY_TIMEOUT_MS = 600_000;

let ownUpdates: Promise<unknown> = Promise.resolve();

/**
 * The worker's own job.json updates, one at a time: progress notes are fired without waiting,
 * and letting them race each other for the job's file lock would cost polling waits every turn.
 */
function updateOwnJob(...args: Parameters<typeof updateJob>): Promise<unknown> {
  ownUpdates = ownUpdates.then(() => updateJob(...args)).catch(() => undefined);
  return ownUpdates;
}

async function main(id: string): Promise<void> {
  const env = process.env;
  const dataHome = resolveDataHome(env);
  const context: EngineContext = {
    env,
    projectDir: readJob(dataHome, id).project,
    dataHome,
    now: () => new Date(),
  };
  const aborter = new AbortController();
  const job = await updateJob(dataHome, id, () => ({
    state: 'running',
    startedAt: new Date().toISOString(),
    worker: currentProcessIdentity(),
  }));
  appendEvent(dataHome, id, 'state', `running (pid ${process.pid})`);
  const deadline = setTimeout(() => aborter.abort(new Error('hard timeout')), job.timeoutS * 1000);
  try {
    const outcome = await runTask(job, context, aborter.signal);
    const verification = job.testCommand
      ? await runTestCommand(job.testCommand, job.workdir, workerEnv(env), VERIFY_TIMEOUT_MS)
      : undefined;
    await finishTask(dataHome, id, {
      state: 'done',
      summary: outcome,
      ...(verification ? { verification } : {}),
    });
  } catch (error) {
    const timedOut = aborter.signal.aborted;
    await finishTask(dataHome, id, {
      state: timedOut ? 'timeout' : 'failed',
      error: timedOut ? `hard timeout: ran longer than ${job.timeoutS} s` : errorMessage(error),
    });
  } finally {
    clearTimeout(deadline);
  }
}

async function runTask(job: JobFile, context: EngineContext, signal: AbortSignal): Promise<string> {
  const { dataHome } = context;
  const directory = jobDir(dataHome, job.id);
  const agent = job.agent
    ? findAgent(job.agent.name, {
        projectDir: job.project,
        home: context.env.HOME ?? '',
        pluginRoot: pluginRootFrom(context.env, import.meta.url),
      })
    : undefined;
  const allowed = agent?.tools;
  const tools = FILE_AND_SHELL_TOOLS.filter((tool) => !allowed || allowed.includes(tool.name));
  const guard = installGitGuard(join(dataHome, 'bin-guard'));
  mkdirSync(join(directory, 'tmp'), { recursive: true });
  const outcome = await runAgentLoop({
    system: workerPrompt(job, agent?.body),
    task: job.task,
    tools,
    maxTurns: job.maxTurns,
    maxOutputTokens: 8_192,
    callModel: (request) => callForTask(job.id, request, context, signal),
    toolContext: {
      root: realpathSync(job.workdir),
      env: workerEnv(context.env, {
        PATH: `${guard}:${context.env.PATH ?? ''}`,
        TMPDIR: join(directory, 'tmp'),
        [TASK_ID_VARIABLE]: job.id,
      }),
      signal,
      onChildProcess: (pgid, running) =>
        void updateOwnJob(dataHome, job.id, (current) => ({
          childPgids: running
            ? [...(current.childPgids ?? []), pgid]
            : (current.childPgids ?? []).filter((group) => group !== pgid),
        })),
    },
    hooks: {
      onStep: (step, activity) => {
        appendEvent(dataHome, job.id, 'step', `${step}: ${activity}`);
        // The turn's start is recorded with the model call's result; only real activity is written now.
        if (activity === 'thinking') return;
        void updateOwnJob(dataHome, job.id, () => ({
          step,
          activity,
          lastEventAt: new Date().toISOString(),
        }));
      },
      askSupervisor: (question) => askSupervisor(job, dataHome, question, signal),
      takeSteering: () => takeMessages(directory, 'steer').map((message) => message.text),
      onFilesWritten: (paths) =>
        void updateOwnJob(dataHome, job.id, (current) => ({
          filesTouched: [...new Set([...current.filesTouched, ...paths])],
        })),
    },
  });
  return outcome.stoppedBy === 'max_turns'
    ? `${outcome.summary}\n\n(Stopped at the turn budget of ${job.maxTurns}.)`
    : outcome.summary;
}

/** One model call of the task, through the engine (pools, budget, ledger), stopping when the task ended. */
async function callForTask(
  id: string,
  request: GenerateRequest,
  context: EngineContext,
  signal: AbortSignal,
) {
  const job = readJob(context.dataHome, id);
  if (isTerminal(job.state)) throw new Error(`the task is already ${job.state}`);
  if (job.budgetUsd !== undefined && job.costUsd >= job.budgetUsd) {
    throw new Error(
      `budget reached: spent $${job.costUsd.toFixed(4)} of the task's $${job.budgetUsd}`,
    );
  }
  const served = await callModel(
    { profile: job.profile, request, bytesSent: 0, taskId: id, signal },
    context,
  );
  await updateOwnJob(context.dataHome, id, (current) => ({
    step: current.step + 1,
    costUsd: current.costUsd + served.costUsd,
    modelAnswered: served.result.modelAnswered,
    lastEventAt: new Date().toISOString(),
  }));
  appendEvent(
    context.dataHome,
    id,
    'model',
    `${served.result.modelAnswered} ${served.result.usage.inputTokens}/${served.result.usage.outputTokens} tokens`,
  );
  return served.result;
}

/** Flips the task to needs_input and waits for an answer; after the timeout, proceeds on its own. */
async function askSupervisor(
  job: JobFile,
  dataHome: string,
  question: string,
  signal: AbortSignal,
): Promise<string> {
  await updateOwnJob(dataHome, job.id, () => ({
    state: 'needs_input',
    question,
    lastEventAt: new Date().toISOString(),
  }));
  appendEvent(dataHome, job.id, 'question', question);
  const deadline = Date.now() + job.questionTimeoutS * 1000;
  let answer: string | undefined;
  while (answer === undefined && Date.now() < deadline && !signal.aborted) {
    answer = takeMessages(jobDir(dataHome, job.id), 'answer')[0]?.text;
    if (answer === undefined) await new Promise((resolve) => setTimeout(resolve, 250));
  }
  await updateOwnJob(dataHome, job.id, (current) =>
    isTerminal(current.state)
      ? undefined
      : { state: 'running', question: undefined, lastEventAt: new Date().toISOString() },
  );
  appendEvent(dataHome, job.id, 'answer', answer ?? '(no answer in time)');
  return (
    answer ??
    'No answer came in time. Proceed on your best conservative judgement, and say in your summary what you assumed.'
  );
}

const id = process.argv[2] ?? '';
main(id).catch((error: unknown) => {
  process.stderr.write(`[delegate worker] ${String((error as Error).stack ?? error)}\n`);
  process.exitCode = 1;
});
