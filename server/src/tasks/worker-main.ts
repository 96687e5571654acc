/**
 * Entry of the detached task worker (dist/task-worker.mjs <task id>): runs the builtin agent
 * in the task's directory, writes job.json and events.jsonl as it goes, verifies, salvages and
 * records the result. The MCP server only spawns it and reads its files.
 */
import { mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { runAgentLoop } from '../agent/agent-loop.ts';
import { agentRootsFor, findAgent } from '../agent/agents.ts';
import { TURN_BUDGET } from '../agent/turn-budget.ts';
import { closeSandbox, sandboxForJob } from '../sandbox/index.ts';
import {
  FILE_AND_SHELL_TOOLS,
  installGitGuard,
  workerEnv,
  type WorkerToolContext,
} from '../agent/worker-tools/index.ts';
import { serverFromSnapshot } from '../profiles/discover-local.ts';
import { resolveDataHome } from '../config/paths.ts';
import { isCliFormat } from '../config/schema.ts';
import { callModel } from '../calls/call-model.ts';
import type { AppContext } from '../profiles/app-context.ts';
import type { GenerateRequest } from '../wire/spec.ts';
import { currentProcessIdentity } from '../util/process-identity.ts';
import { errorMessage } from '../util/user-error.ts';
import { finishTask, type Outcome } from './finish-task.ts';
import { CliTaskError, runCliTask } from './engines/index.ts';
import { createTaskFixRounds } from './fix-rounds.ts';
import { appendEvent, isTerminal, jobDir, readJob, updateJob } from '../store/job-store.ts';
import { takeMessages } from '../store/mailbox.ts';
import { TASK_ID_VARIABLE } from './reconcile.ts';
import { REVIEW_MAX_TURNS, reviewWork } from './review.ts';
import { workerPrompt } from './worker-prompt.ts';
import { workingDiff } from './worktree.ts';
import type { JobFile } from '../store/job-file.ts';

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
  const queued = readJob(dataHome, id);
  const snapshot = queued.discovered;
  const context: AppContext = {
    env,
    projectDir: queued.project,
    dataHome,
    now: () => new Date(),
    learned: new Map(),
    // The server process's pick, not a new probe that could find another server or model.
    ...(snapshot ? { discover: () => Promise.resolve(serverFromSnapshot(snapshot)) } : {}),
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
    await finishTask(dataHome, id, { state: 'done', ...outcome });
  } catch (error) {
    const timedOut = aborter.signal.aborted;
    await finishTask(dataHome, id, {
      state: timedOut ? 'timeout' : error instanceof CliTaskError ? error.taskState : 'failed',
      error: timedOut ? `hard timeout: ran longer than ${job.timeoutS} s` : errorMessage(error),
    });
  } finally {
    clearTimeout(deadline);
    // The sandbox's proxies would keep the worker alive after the task.
    await closeSandbox();
  }
}

type TaskOutcome = Omit<Outcome, 'state'>;

/** The worker's run, fix rounds included, then the reviewer pass when there is a definition of done. */
async function runTask(
  job: JobFile,
  context: AppContext,
  signal: AbortSignal,
): Promise<TaskOutcome> {
  const { dataHome } = context;
  if (job.engine && isCliFormat(job.engine)) {
    return runCliTask(job, context, signal, {
      recordActivity: (activity, step) =>
        void updateOwnJob(dataHome, job.id, () => ({
          ...(step !== undefined ? { step } : {}),
          activity,
          lastEventAt: new Date().toISOString(),
        })),
      updateJob: (change) => void updateOwnJob(dataHome, job.id, change),
    });
  }
  const directory = jobDir(dataHome, job.id);
  const roots = agentRootsFor(job.project, context.env);
  const agent = job.agent ? findAgent(job.agent.name, roots) : undefined;
  const allowed = agent?.tools;
  const tools = FILE_AND_SHELL_TOOLS.filter((tool) => !allowed || allowed.includes(tool.name));
  const guard = installGitGuard(join(dataHome, 'bin-guard'));
  mkdirSync(join(directory, 'tmp'), { recursive: true });
  const sandbox = await sandboxForJob(job, dataHome, context.env, [guard]);
  const toolContext: WorkerToolContext = {
    root: realpathSync(job.workdir),
    env: workerEnv(context.env, {
      PATH: `${guard}:${context.env.PATH ?? ''}`,
      TMPDIR: join(directory, 'tmp'),
      [TASK_ID_VARIABLE]: job.id,
    }),
    signal,
    ...(sandbox ? { sandbox } : {}),
    onChildProcess: (pgid, running) =>
      void updateOwnJob(dataHome, job.id, (current) => ({
        childPgids: running
          ? [...(current.childPgids ?? []), pgid]
          : (current.childPgids ?? []).filter((group) => group !== pgid),
      })),
  };
  const recordActivity = (activity: string, step?: number) =>
    void updateOwnJob(dataHome, job.id, () => ({
      ...(step !== undefined ? { step } : {}),
      activity,
      lastEventAt: new Date().toISOString(),
    }));
  const testCommand = job.testCommand;
  const fixRounds = testCommand
    ? createTaskFixRounds(
        { ...job, testCommand },
        {
          dataHome,
          env: context.env,
          ...(sandbox ? { sandbox } : {}),
          turnsPerRound: turnsPerFixRound(job.maxTurns, job.fixRounds ?? 0),
          signal,
          onActivity: (activity) => recordActivity(activity),
        },
      )
    : undefined;
  const outcome = await runAgentLoop({
    system: workerPrompt(job, agent?.body),
    task: job.task,
    tools,
    maxTurns: job.maxTurns,
    maxOutputTokens: 8_192,
    callModel: (request) => callForTask(job.id, request, context, signal),
    toolContext,
    hooks: {
      onStep: (step, activity) => {
        appendEvent(dataHome, job.id, 'step', `${step}: ${activity}`);
        // The turn's start is recorded with the model call's result; only real activity is written now.
        if (activity !== 'thinking') recordActivity(activity, step);
      },
      askSupervisor: (question) => askSupervisor(job, dataHome, question, signal),
      takeSteering: () => takeMessages(directory, 'steer').map((message) => message.text),
      onFilesWritten: (paths) =>
        void updateOwnJob(dataHome, job.id, (current) => ({
          filesTouched: [...new Set([...current.filesTouched, ...paths])],
        })),
      ...(fixRounds ? { continueAfterAnswer: () => fixRounds.afterAnswer() } : {}),
    },
  });
  const summary =
    outcome.stoppedBy === 'max_turns'
      ? `${outcome.summary}\n\n(Stopped at the turn budget of ${outcome.turns}.)`
      : outcome.summary;
  const verification = await fixRounds?.finalFacts();
  const failedAttempts = fixRounds?.failedAttempts() ?? [];
  const review =
    job.definitionOfDone && job.reviewProfile
      ? await reviewWork({
          job,
          profile: job.reviewProfile,
          maxTurns: REVIEW_MAX_TURNS,
          agent: findAgent('reviewer', roots),
          diff: job.git ? await workingDiff(job.git, job.baseCommit) : undefined,
          verification,
          toolContext,
          callModel: (request) => callForTask(job.id, request, context, signal, job.reviewProfile),
          onStep: (_step, activity) => recordActivity(activity),
        })
      : undefined;
  return {
    summary,
    ...(verification ? { verification } : {}),
    ...(failedAttempts.length ? { failedAttempts } : {}),
    ...(review ? { review } : {}),
  };
}

/**
 * Turns a fix round adds: half the task's budget (at least 10), but all rounds together never
 * take the run past the hard cap; a round with none left works with what the run has left.
 */
function turnsPerFixRound(maxTurns: number, rounds: number): number {
  if (rounds === 0) return 0;
  const room = Math.max(0, Math.floor((TURN_BUDGET.cap - maxTurns) / rounds));
  return Math.min(Math.max(10, Math.ceil(maxTurns / 2)), room);
}

/** One model call of the task, through the engine (pools, budget, ledger), stopping when the task ended. */
async function callForTask(
  id: string,
  request: GenerateRequest,
  context: AppContext,
  signal: AbortSignal,
  profile?: string,
) {
  const job = readJob(context.dataHome, id);
  if (isTerminal(job.state)) throw new Error(`the task is already ${job.state}`);
  const served = await callModel(
    {
      profile: profile ?? job.profile,
      request,
      bytesSent: 0,
      taskId: id,
      signal,
      ...(job.budgetUsd !== undefined
        ? { taskBudget: { capUsd: job.budgetUsd, spentUsd: job.costUsd } }
        : {}),
      // Each billed attempt counts as it is billed: a call that ends in an error cost too.
      onSpend: (usd) =>
        void updateOwnJob(context.dataHome, id, (current) => ({
          costUsd: current.costUsd + usd,
        })),
    },
    context,
  );
  await updateOwnJob(context.dataHome, id, (current) => ({
    step: current.step + 1,
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
