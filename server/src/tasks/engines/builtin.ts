/** The builtin engine: the agent loop with the worker tools, in the task's directory. */
import { mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { runAgentLoop } from '../../agent/agent-loop.ts';
import { findAgentLazily } from '../../agent/find-agent-lazily.ts';
import { TURN_BUDGET } from '../../agent/turn-budget.ts';
import {
  FILE_AND_SHELL_TOOLS,
  type WorkerTool,
  type WorkerToolContext,
} from '../../agent/worker-tools/index.ts';
import { installGitGuard } from '../../sandbox/git-guard.ts';
import { checkJobSandbox, sandboxPolicyForJob } from '../../sandbox/index.ts';
import { jobDir } from '../../store/job-store.ts';
import { takeMessages } from '../../store/mailbox.ts';
import { askSupervisor } from '../ask-supervisor.ts';
import { callForTask, takeTaskSlot } from '../task-spending.ts';
import { remoteTaskOf } from '../../runners/remote-shell.ts';
import { DEFAULT_RUNNER_TASKS } from '../../runners/check-runner.ts';
import { workerPrompt } from '../worker-prompt.ts';
import { taskEnv, type AfterAnswer, type EngineStart, type TaskEngine } from './task-engine.ts';

export const builtinEngine: TaskEngine = {
  async start(input) {
    const { job, context, signal, recorder } = input;
    // A runner's tasks share its maxTasks, across sessions, for their whole run.
    const runner = job.runner;
    if (runner) recorder.activity(`waiting for a slot on runner ${runner.name}`);
    const slot = runner
      ? await takeTaskSlot(
          context.dataHome,
          `runner:${runner.name}`,
          runner.maxTasks ?? DEFAULT_RUNNER_TASKS,
          job,
          signal,
        )
      : undefined;
    const tools = builtinToolContext(input);
    const { toolContext, sandboxReady } = tools;
    return {
      ...(toolContext.sandbox ? { sandbox: toolContext.sandbox } : {}),
      ...(toolContext.remote ? { remote: toolContext.remote } : {}),
      turnsPerFixRound: turnsPerFixRound(input.job.maxTurns, input.job.fixRounds ?? 0),
      reviewTools: toolContext,
      run: (afterAnswer) =>
        runBuiltin(
          input,
          tools,
          afterAnswer &&
            (async () => {
              await sandboxReady();
              return afterAnswer();
            }),
        ),
      ...(slot ? { close: () => slot.release() } : {}),
    };
  },
};

/** The task's tools and their context, and the check that its sandbox still works. */
interface BuiltinTools {
  toolContext: WorkerToolContext;
  /**
   * Resolves once the sandbox is known to work (at once when the task runs unsandboxed); throws
   * when a task started sandboxed finds it broken. Every command and test run waits for it.
   */
  sandboxReady: () => Promise<void>;
  /**
   * Starts the sandbox (its library, its proxies) while the first model call is under way, not
   * before it. A task decided on an earlier process's check probes it only in sandboxReady, when
   * a command is about to run: a probe begun beside a model call could outlive the task, and
   * fail under its removed worktree.
   */
  startSandbox: () => Promise<void>;
}

/** The worker tools' context: the task's directory, clean env with the git guard, its sandbox. */
function builtinToolContext(input: EngineStart): BuiltinTools {
  const { job, context, recorder } = input;
  const { dataHome } = context;
  const directory = jobDir(dataHome, job.id);
  const guard = installGitGuard(join(dataHome, 'bin-guard'));
  mkdirSync(join(directory, 'tmp'), { recursive: true });
  const remote = remoteTaskOf(job, dataHome, context.env);
  // On a runner, commands run in its sandbox there; the worker here only reads and writes files.
  const sandbox = remote ? undefined : sandboxPolicyForJob(job, dataHome, context.env, [guard]);
  let started: Promise<void> | undefined;
  let probed: Promise<void> | undefined;
  const startSandbox = () =>
    (started ??= sandbox ? checkJobSandbox(context.env, dataHome) : Promise.resolve());
  return {
    toolContext: {
      root: realpathSync(job.workdir),
      env: taskEnv(input, directory, { PATH: `${guard}:${context.env.PATH ?? ''}` }),
      signal: input.signal,
      ...(sandbox ? { sandbox } : {}),
      ...(remote ? { remote } : {}),
      onChildProcess: (pgid, running) => recorder.childProcess(pgid, running),
    },
    startSandbox,
    sandboxReady: () =>
      job.sandboxOnRecord && sandbox
        ? (probed ??= startSandbox().then(() =>
            checkJobSandbox(context.env, dataHome, { probe: true, signal: input.signal }),
          ))
        : startSandbox(),
  };
}

/** The tool, run only once the sandbox is known to work (a broken one fails the task). */
function afterSandboxCheck(tool: WorkerTool, sandboxReady: () => Promise<void>): WorkerTool {
  return {
    ...tool,
    run: async (toolInput, toolContext) => {
      await sandboxReady();
      return tool.run(toolInput, toolContext);
    },
  };
}

async function runBuiltin(
  input: EngineStart,
  { toolContext, sandboxReady, startSandbox }: BuiltinTools,
  afterAnswer: AfterAnswer | undefined,
): Promise<string> {
  const { job, context, recorder } = input;
  const agent = job.agent
    ? await findAgentLazily(job.agent.name, { ...context, projectDir: job.project })
    : undefined;
  const allowed = agent?.tools;
  const directory = jobDir(context.dataHome, job.id);
  const outcome = await runAgentLoop({
    system: workerPrompt(job, agent?.body),
    task: job.task,
    tools: FILE_AND_SHELL_TOOLS.filter((tool) => !allowed || allowed.includes(tool.name)).map(
      (tool) => afterSandboxCheck(tool, sandboxReady),
    ),
    maxTurns: job.maxTurns,
    maxOutputTokens: 8_192,
    callModel: (request) => {
      const answer = callForTask(input, request);
      // The sandbox starts (its library, its proxies) while the model answers; a failure
      // surfaces at the first command, which waits for it.
      setImmediate(() => void startSandbox().catch(() => undefined));
      return answer;
    },
    toolContext,
    hooks: {
      onStep: (step, activity) => {
        recorder.event('step', `${step}: ${activity}`);
        // The turn's start is recorded with the model call's result; only real activity is written now.
        if (activity !== 'thinking') recorder.activity(activity, step);
      },
      askSupervisor: (question) => askSupervisor(job, recorder, question, input.signal),
      takeSteering: () => takeMessages(directory, 'steer').map((message) => message.text),
      onFilesWritten: (paths) => recorder.filesTouched(paths),
      ...(afterAnswer ? { continueAfterAnswer: afterAnswer } : {}),
    },
  });
  return outcome.stoppedBy === 'max_turns'
    ? `${outcome.summary}\n\n(Stopped at the turn budget of ${outcome.turns}.)`
    : outcome.summary;
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
