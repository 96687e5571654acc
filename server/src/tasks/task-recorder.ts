/**
 * What a running task writes about itself, whatever engine runs it (the builtin loop or a CLI):
 * activity and step, files touched, child process groups, cost. One recorder per running task,
 * in its worker process; every change goes through `updateJob`, in the order it was recorded.
 *
 * Writes are proportional to what changed, not to how often: changes waiting for the job's lock
 * go in one write, a write that would change nothing is skipped, and progress (step, activity,
 * model, cost) is written at most every {@link PROGRESS_WRITE_MS}. Progress carries no guarantee
 * that job.json must hold at once: every step is in events.jsonl as it happens, every billed call
 * in the ledger (a stop or a look that finds the worker dead takes the cost from there), and the
 * idle timeout is minutes long. What another process acts on (a child's process group, a
 * question) is written at once, and with it any progress still waiting.
 */
import { openEventLog, readJobUnlessChanged, updateJob } from '../store/job-store.ts';
import type { JobFile } from '../store/job-file.ts';
import type { KeptReads } from '../util/file-fingerprint.ts';

type JobChange = (job: JobFile) => Partial<JobFile> | undefined;

/** Progress is written at most this often (a real model's turn takes longer; a burst is one write). */
export const PROGRESS_WRITE_MS = 250;

export interface TaskRecorder {
  readonly dataHome: string;
  readonly id: string;
  /**
   * job.json as it is now, for a look every turn: reused while the file is unchanged, and what
   * this recorder wrote is known without a read (`readJobUnlessChanged`). Shared: do not change it.
   */
  job(): JobFile;
  /** Applies a change to job.json after every change recorded before it; resolves once written. */
  update(change: JobChange): Promise<unknown>;
  /** Appends a line to the task's events.jsonl. */
  event(kind: string, text: string): void;
  /** Lets go of events.jsonl once the work is over (a later event opens it again). */
  close(): void;
  /** The task's current activity, and its step when the step moved. */
  activity(activity: string, step?: number): void;
  filesTouched(paths: readonly string[]): void;
  /** A process group the task started, while it runs (a cancel from another process kills it). */
  childProcess(pgid: number, isRunning: boolean): void;
  /** Money the task spent, counted as it is billed. */
  addCost(usd: number): void;
  /** Cost added that job.json does not hold yet: the task's spend is job.json's plus this. */
  unwrittenCostUsd(): number;
  /** A model call of the builtin loop answered: the step advances. */
  modelAnswered(model: string): void;
}

interface Pending {
  change: JobChange;
  costUsd: number;
}

export function createTaskRecorder(dataHome: string, id: string): TaskRecorder {
  let queue: Promise<unknown> = Promise.resolve();
  let pending: Pending[] = [];
  let unwritten = 0;
  let lastWriteAt = 0;
  let timer: NodeJS.Timeout | undefined;
  const events = openEventLog(dataHome, id);
  const kept: KeptReads<JobFile> = new Map();
  // Everything recorded so far, in one read-modify-write; the cost it carries is written with it.
  const writeAll = async () => {
    const batch = pending;
    pending = [];
    lastWriteAt = Date.now();
    if (batch.length === 0) return;
    const cost = batch.reduce((sum, item) => sum + item.costUsd, 0);
    let isWritten = false;
    try {
      await updateJob(
        dataHome,
        id,
        (job) => {
          const patch = changedPart(job, batch);
          // Counted as written in the same tick as the write: a read of job.json never sees it twice.
          isWritten = true;
          unwritten -= cost;
          return patch;
        },
        kept,
      );
    } catch (error) {
      if (isWritten) unwritten += cost;
      throw error;
    }
  };
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    queue = queue.then(writeAll).catch(() => undefined);
    return queue;
  };
  const record = (change: JobChange, costUsd = 0) => {
    pending.push({ change, costUsd });
    unwritten += costUsd;
  };
  const progress = (change: JobChange, costUsd = 0) => {
    record(change, costUsd);
    if (timer) return;
    timer = setTimeout(
      () => void flush(),
      Math.max(0, lastWriteAt + PROGRESS_WRITE_MS - Date.now()),
    );
    // The worker's end writes what is left (runEngine's last update); no timer keeps it alive.
    timer.unref();
  };
  return {
    dataHome,
    id,
    job: () => readJobUnlessChanged(kept, dataHome, id),
    update: (change) => {
      record(change);
      return flush();
    },
    event: (kind, text) => events.append(kind, text),
    close: () => events.close(),
    activity: (activity, step) =>
      progress(() => ({
        ...(step !== undefined ? { step } : {}),
        activity,
        lastEventAt: new Date().toISOString(),
      })),
    filesTouched: (paths) => {
      record((current) => ({ filesTouched: [...new Set([...current.filesTouched, ...paths])] }));
      void flush();
    },
    childProcess: (pgid, isRunning) => {
      record((current) => ({
        childPgids: isRunning
          ? [...(current.childPgids ?? []), pgid]
          : (current.childPgids ?? []).filter((group) => group !== pgid),
      }));
      void flush();
    },
    addCost: (usd) => {
      if (usd !== 0) progress((current) => ({ costUsd: current.costUsd + usd }), usd);
    },
    unwrittenCostUsd: () => unwritten,
    modelAnswered: (model) =>
      progress((current) => ({
        step: current.step + 1,
        modelAnswered: model,
        lastEventAt: new Date().toISOString(),
      })),
  };
}

/**
 * The batch's changes applied in order to the job as it is on disk; only the fields whose value
 * differs (undefined when none does: nothing is written).
 */
function changedPart(job: JobFile, batch: readonly Pending[]): Partial<JobFile> | undefined {
  let current = job;
  for (const { change } of batch) current = { ...current, ...change(current) };
  const patch: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(current)) {
    const before: unknown = job[key as keyof JobFile];
    if (value !== before && JSON.stringify(value) !== JSON.stringify(before)) patch[key] = value;
  }
  return Object.keys(patch).length > 0 ? patch : undefined;
}
