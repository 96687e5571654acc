import { join } from 'node:path';
import type { WorkerToolContext } from '../../agent/worker-tools/index.ts';
import type { AppContext } from '../../profiles/app-context.ts';
import type { SandboxPolicy } from '../../sandbox/index.ts';
import type { RemoteTask } from '../../runners/remote-shell.ts';
import type { JobFile } from '../../store/job-file.ts';
import { workerEnv } from '../../sandbox/worker-env.ts';
import { TASK_ID_VARIABLE } from '../reconcile.ts';
import type { TaskRecorder } from '../task-recorder.ts';

/**
 * The clean environment of a task's commands, whatever engine runs them: its own TMPDIR in the
 * job folder `directory`, and its id (how a cancel finds processes that left their group).
 */
export function taskEnv(
  start: EngineStart,
  directory: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return workerEnv(start.context.env, {
    ...extra,
    TMPDIR: join(directory, 'tmp'),
    [TASK_ID_VARIABLE]: start.job.id,
  });
}

export interface EngineStart {
  job: JobFile;
  context: AppContext;
  signal: AbortSignal;
  recorder: TaskRecorder;
}

/**
 * After an answer, the task's tests run: undefined when the work is done, else the failure to
 * feed back to the worker.
 */
export type AfterAnswer = () => Promise<{ message: string; extraTurns: number } | undefined>;

/** One task's run on an engine, ready to work (its slots, sandbox and directories taken). */
export interface EngineSession {
  /** The task's OS sandbox, where its test runs go too. */
  sandbox?: SandboxPolicy;
  /** The task's runner, where its commands and test runs go. */
  remote?: RemoteTask;
  /** Turns a fix round adds on top of what is left (0 for an engine whose rounds are new runs). */
  turnsPerFixRound: number;
  /**
   * Does the work to the final answer (the task's summary). An engine that keeps its
   * conversation (no `retry`) gets `afterAnswer` and feeds the failures back itself.
   */
  run(afterAnswer?: AfterAnswer): Promise<string>;
  /** A new run that starts from the previous attempt and a failing test run's `message`. */
  retry?(message: string): Promise<string>;
  /** What the reviewer pass reads through; absent: the engine's tasks are not reviewed. */
  reviewTools?: WorkerToolContext;
  /** Frees what the session holds (pool slots). */
  close?(): Promise<void>;
}

/** What runs a task's work: the builtin agent loop or a vendor CLI. */
export interface TaskEngine {
  start(input: EngineStart): Promise<EngineSession>;
}
