/**
 * What a running task writes about itself, whatever engine runs it (the builtin loop or a CLI):
 * activity and step, files touched, child process groups, cost. One recorder per running task,
 * in its worker process; every change goes through `updateJob`, one at a time.
 */
import { appendEvent, updateJob } from '../store/job-store.ts';
import type { JobFile } from '../store/job-file.ts';

type JobChange = (job: JobFile) => Partial<JobFile> | undefined;

export interface TaskRecorder {
  readonly dataHome: string;
  readonly id: string;
  /** Applies a change to job.json after every change recorded before it. */
  update(change: JobChange): Promise<unknown>;
  /** Appends a line to the task's events.jsonl. */
  event(kind: string, text: string): void;
  /** The task's current activity, and its step when the step moved. */
  activity(activity: string, step?: number): void;
  filesTouched(paths: readonly string[]): void;
  /** A process group the task started, while it runs (a cancel from another process kills it). */
  childProcess(pgid: number, isRunning: boolean): void;
  /** Money the task spent, counted as it is billed. */
  addCost(usd: number): void;
  /** A model call of the builtin loop answered: the step advances. */
  modelAnswered(model: string): Promise<unknown>;
}

export function createTaskRecorder(dataHome: string, id: string): TaskRecorder {
  let queue: Promise<unknown> = Promise.resolve();
  // Progress notes are fired without waiting; letting them race each other for the job's file
  // lock would cost polling waits every turn.
  const update = (change: JobChange) => {
    queue = queue.then(() => updateJob(dataHome, id, change)).catch(() => undefined);
    return queue;
  };
  return {
    dataHome,
    id,
    update,
    event: (kind, text) => appendEvent(dataHome, id, kind, text),
    activity: (activity, step) =>
      void update(() => ({
        ...(step !== undefined ? { step } : {}),
        activity,
        lastEventAt: new Date().toISOString(),
      })),
    filesTouched: (paths) =>
      void update((current) => ({
        filesTouched: [...new Set([...current.filesTouched, ...paths])],
      })),
    childProcess: (pgid, isRunning) =>
      void update((current) => ({
        childPgids: isRunning
          ? [...(current.childPgids ?? []), pgid]
          : (current.childPgids ?? []).filter((group) => group !== pgid),
      })),
    addCost: (usd) => void update((current) => ({ costUsd: current.costUsd + usd })),
    modelAnswered: (model) =>
      update((current) => ({
        step: current.step + 1,
        modelAnswered: model,
        lastEventAt: new Date().toISOString(),
      })),
  };
}
