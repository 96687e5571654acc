import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { scaledMs } from './timing.ts';

/** SIGKILL, ignoring a process (or, with a negative id, a group) that is already gone. */
export function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** Live (non-zombie) processes, straight from /proc, that `keep` accepts given their stat fields and command line. */
export function liveProcesses(
  keep: (facts: { pid: number; group: number; commandLine: string }) => boolean,
): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((entry) => {
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        const [state, , group] = stat
          .slice(stat.lastIndexOf(')') + 1)
          .trim()
          .split(/\s+/);
        if (state === 'Z') return [];
        const commandLine = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
        return keep({ pid: Number(entry), group: Number(group), commandLine })
          ? [Number(entry)]
          : [];
      } catch {
        return [];
      }
    });
}

/**
 * Waits (up to `timeoutMs`, scaled) for every task's worker recorded under the data home to be
 * done with it — a worker may still be salvaging after its task shows `done` — then kills any
 * that is not, so a test can remove its temp dirs without racing them. A worker of its own is
 * done when it exits; a task host (it runs the server's other tasks, and waits for the next
 * while its server lives) when the task's `hosted` marker is gone.
 */
export async function settleWorkers(dataHome: string, timeoutMs = 10_000): Promise<void> {
  const busy = (): number[] => {
    try {
      return readdirSync(`${dataHome}/jobs`).flatMap((id) => {
        const pid = workerRunningTask(dataHome, id);
        return pid === undefined ? [] : [pid];
      });
    } catch {
      return [];
    }
  };
  const deadline = Date.now() + scaledMs(timeoutMs);
  let running = busy();
  while (running.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    running = busy();
  }
  for (const pid of new Set(running)) killQuietly(-pid);
}

/**
 * The end of a test that ran tasks, in the order that leaves nothing behind: the server (no
 * new workers), its workers (they may still be salvaging), the fakes they called, then the
 * temp dirs.
 */
export async function endTaskTest(
  world: { dataHome: string; cleanup(): void },
  server: { close(): Promise<unknown> } | undefined,
  ...fakes: Array<{ close(): Promise<unknown> } | undefined>
): Promise<void> {
  await server?.close();
  await settleWorkers(world.dataHome);
  for (const fake of fakes) await fake?.close();
  world.cleanup();
}

/**
 * What still runs of task `id`: every process carrying its id in its environment, and its
 * recorded worker while that runs the task — a worker of its own while it lives, a task host
 * (which runs other tasks too, and stays) while the task's `hosted` marker is in its folder.
 */
export function taskProcessesLeft(dataHome: string, id: string): number[] {
  const marker = `DELEGATE_TASK_ID=${id}\0`;
  const carrying = liveProcesses(({ pid }) => {
    try {
      return `${readFileSync(`/proc/${pid}/environ`, 'latin1')}\0`.includes(marker);
    } catch {
      return false;
    }
  });
  const worker = workerRunningTask(dataHome, id);
  return worker !== undefined && !carrying.includes(worker) ? [...carrying, worker] : carrying;
}

/**
 * The pid of task `id`'s recorded worker while it still runs the task: a worker of its own while
 * it lives, a task host (which runs other tasks too, and stays) while the task's `hosted` marker
 * is in its folder. Undefined otherwise, or when job.json cannot be read.
 */
function workerRunningTask(dataHome: string, id: string): number | undefined {
  let worker: { pid: number; hosted?: boolean } | undefined;
  try {
    worker = (
      JSON.parse(readFileSync(`${dataHome}/jobs/${id}/job.json`, 'utf8')) as {
        worker?: { pid: number; hosted?: boolean };
      }
    ).worker;
  } catch {
    return undefined;
  }
  if (!worker) return undefined;
  const { pid } = worker;
  const isRunning =
    liveProcesses((facts) => facts.pid === pid && facts.commandLine.includes('task-worker'))
      .length > 0;
  if (!isRunning) return undefined;
  return !worker.hosted || existsSync(`${dataHome}/jobs/${id}/hosted`) ? pid : undefined;
}
