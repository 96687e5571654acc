/**
 * The one lifecycle of a task's work, whatever engine runs it: start the engine, run it, fix
 * rounds (the test command after each answer, its failures fed back), the reviewer pass. The
 * worker's `main` records the outcome (finish, salvage).
 */
import { findAgentLazily } from '../agent/find-agent-lazily.ts';
import type { AppContext } from '../profiles/app-context.ts';
import type { JobFile, ReviewFacts, VerificationFacts } from '../store/job-file.ts';
import type { EngineSession } from './engines/task-engine.ts';
import { taskEngineFor } from './engines/registry.ts';
import type { Outcome } from './finish-task.ts';
import { createTaskFixRounds, type FixRounds } from './fix-rounds.ts';
import { REVIEW_MAX_TURNS, reviewWork } from './review.ts';
import { createTaskRecorder, type TaskRecorder } from './task-recorder.ts';
import { callForTask } from './task-spending.ts';
import { workingDiff } from './worktree.ts';

export type TaskOutcome = Omit<Outcome, 'state'>;

interface RunningTask {
  job: JobFile;
  context: AppContext;
  signal: AbortSignal;
  recorder: TaskRecorder;
}

/** The task's work on its engine, fix rounds included, then the reviewer pass when there is a definition of done. */
export async function runEngine(
  job: JobFile,
  context: AppContext,
  signal: AbortSignal,
): Promise<TaskOutcome> {
  const task = { job, context, signal, recorder: createTaskRecorder(context.dataHome, job.id) };
  const session = await taskEngineFor(job.engine).start(task);
  try {
    const fixRounds = fixRoundsOf(task, session);
    const summary = await runWithFixRounds(task, session, fixRounds);
    const verification = await fixRounds?.finalFacts();
    const failedAttempts = fixRounds?.failedAttempts() ?? [];
    const review = await reviewPass(task, session, verification);
    return {
      summary,
      ...(verification ? { verification } : {}),
      ...(failedAttempts.length ? { failedAttempts } : {}),
      ...(review ? { review } : {}),
    };
  } finally {
    await session.close?.();
    // Progress notes still on their way land before the outcome is recorded.
    try {
      await task.recorder.update(() => undefined);
    } finally {
      task.recorder.close();
    }
  }
}

function fixRoundsOf(task: RunningTask, session: EngineSession): FixRounds | undefined {
  const { job, context, signal, recorder } = task;
  const testCommand = job.testCommand;
  if (!testCommand) return undefined;
  return createTaskFixRounds(
    { ...job, testCommand },
    {
      dataHome: context.dataHome,
      env: context.env,
      ...(session.sandbox ? { sandbox: session.sandbox } : {}),
      ...(session.remote ? { remote: session.remote } : {}),
      turnsPerRound: session.turnsPerFixRound,
      signal,
      onActivity: (activity) => recorder.activity(activity),
    },
  );
}

/**
 * Fix until green: an engine that keeps its conversation gets the rounds inside its run; for one
 * that cannot, each failing test run starts a new run with the failure's output.
 */
async function runWithFixRounds(
  task: RunningTask,
  session: EngineSession,
  fixRounds: FixRounds | undefined,
): Promise<string> {
  if (!session.retry || !fixRounds) {
    return session.run(fixRounds && (() => fixRounds.afterAnswer()));
  }
  let summary = await session.run();
  for (let next = await fixRounds.afterAnswer(); next; next = await fixRounds.afterAnswer()) {
    task.recorder.event('fix-round', `${fixRounds.failedAttempts().length + 1}`);
    summary = await session.retry(next.message);
  }
  return summary;
}

/** The reviewer's verdict on the diff, when the task has a definition of done and the engine can be reviewed. */
async function reviewPass(
  task: RunningTask,
  session: EngineSession,
  verification: VerificationFacts | undefined,
): Promise<ReviewFacts | undefined> {
  const { job, context, recorder } = task;
  const reviewProfile = job.reviewProfile;
  if (!job.definitionOfDone || !reviewProfile || !session.reviewTools) return undefined;
  return reviewWork({
    job,
    profile: reviewProfile,
    maxTurns: REVIEW_MAX_TURNS,
    // The project's or the user's reviewer, when there is one (the lookup loads only for a review).
    agent: await findAgentLazily('reviewer', { ...context, projectDir: job.project }),
    diff: job.git ? await workingDiff(job.git, job.baseCommit) : undefined,
    verification,
    toolContext: session.reviewTools,
    callModel: (request) => callForTask(task, request, reviewProfile),
    onStep: (_step, activity) => recorder.activity(activity),
  });
}
