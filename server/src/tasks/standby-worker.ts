import { mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { newTaskId, releaseTaskId, reserveTaskId } from '../store/job-store.ts';
import {
  spawnWaitingWorker,
  workerLogPath,
  type WaitingWorker,
  type WorkerLaunch,
} from './spawn-worker.ts';

/** How long a standby worker waits for a start before it is let go. */
export const STANDBY_IDLE_MS = 10 * 60_000;

/** A task's id, reserved, and the worker (loading or loaded) that runs it once told to go. */
export interface StartingWorker {
  id: string;
  worker: WaitingWorker | undefined;
}

/**
 * One task worker kept loaded for the next `task_start` of a long-lived server, so that start
 * pays neither a Node start nor the worker's code load (most of the time from `task_start` to
 * the first model request). It is started after a start (a session that starts a task tends to
 * start more), already holding the id its task will get (in its environment, as every worker
 * has it, so a cancel or a clean-up finds it by id), and waits on its stdin like any worker
 * started ahead of its task. It has no job folder until a start takes it: nothing lists it. It
 * is let go after {@link STANDBY_IDLE_MS} unused, when the server exits, or — when the server is
 * killed — on its own when its stdin ends.
 */
export interface Standby {
  /** The id and worker for a start in `project`: the standby's when it fits, else new ones. */
  take(project: string, launch: WorkerLaunch): StartingWorker;
  /** Starts the standby for the next start in `project` (after this event-loop turn). */
  prepare(project: string, launch: WorkerLaunch): void;
  /** Lets the standby go (the server is exiting): synchronous. */
  close(): void;
}

interface Held {
  id: string;
  project: string;
  launch: WorkerLaunch;
  worker: WaitingWorker;
  timer: NodeJS.Timeout;
}

export function createStandby(idleMs = STANDBY_IDLE_MS): Standby {
  let held: Held | undefined;
  let isClosed = false;
  const letGo = () => {
    if (!held) return;
    const { worker, timer, launch, id } = held;
    held = undefined;
    clearTimeout(timer);
    worker.dismiss();
    rmSync(standbyLogPath(launch.dataHome, id), { force: true });
  };
  return {
    take(project, launch) {
      const standby = held;
      const fits =
        standby !== undefined &&
        standby.project === project &&
        standby.launch.dataHome === launch.dataHome &&
        standby.launch.workerScript === launch.workerScript &&
        standby.worker.isAlive();
      if (!standby || !fits) {
        letGo();
        return startingWorker(project, launch);
      }
      held = undefined;
      clearTimeout(standby.timer);
      // Its id was drawn when it started, not reserved: another start may have taken it since.
      const drawn = [standby.id];
      const id = reserveTaskId(launch.dataHome, () => drawn.shift() ?? newTaskId());
      if (id !== standby.id) {
        standby.worker.dismiss();
        rmSync(standbyLogPath(launch.dataHome, standby.id), { force: true });
        return withWorker(id, project, launch);
      }
      // Its log becomes the task's; the worker keeps writing to it through its descriptor.
      try {
        renameSync(standbyLogPath(launch.dataHome, id), workerLogPath(launch.dataHome, id));
      } catch {
        // No log to keep.
      }
      return { id, worker: standby.worker };
    },
    prepare(project, launch) {
      setImmediate(() => {
        if (isClosed || held) return;
        const id = newTaskId();
        const log = standbyLogPath(launch.dataHome, id);
        mkdirSync(join(launch.dataHome, 'standby'), { recursive: true });
        const worker = spawnWaitingWorker(id, project, launch, log);
        if (!worker) return;
        const timer = setTimeout(letGo, idleMs);
        timer.unref();
        held = { id, project, launch, worker, timer };
      });
    },
    close() {
      isClosed = true;
      letGo();
    },
  };
}

let standbyOfThisProcess: Standby | undefined;

/** The long-lived server's standby: made at its first start, let go when the process exits. */
export function serverStandby(): Standby {
  if (!standbyOfThisProcess) {
    const standby = createStandby();
    process.once('exit', () => standby.close());
    standbyOfThisProcess = standby;
  }
  return standbyOfThisProcess;
}

/** A new reserved id and its worker, loading while the task is prepared. */
export function startingWorker(project: string, launch: WorkerLaunch): StartingWorker {
  return withWorker(reserveTaskId(launch.dataHome), project, launch);
}

function withWorker(id: string, project: string, launch: WorkerLaunch): StartingWorker {
  try {
    return { id, worker: spawnWaitingWorker(id, project, launch) };
  } catch (error) {
    releaseTaskId(launch.dataHome, id);
    throw error;
  }
}

/** Where a standby worker logs until a start takes it (then the task's worker.log). */
export function standbyLogPath(dataHome: string, id: string): string {
  return join(dataHome, 'standby', `${id}.log`);
}
