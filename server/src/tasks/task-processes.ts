import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { isProcessGroupAlive, killProcessGroup } from '../sandbox/kill-process-group.ts';
import {
  isProcessAlive,
  parseProcessStat,
  type ProcessIdentity,
} from '../util/process-identity.ts';
import type { JobFile } from '../store/job-file.ts';
import { resolveDataHome } from '../config/paths.ts';
import { killRemoteCommand } from '../runners/remote-shell.ts';

/** Set in the environment of the worker and of everything it runs, so the whole tree can be found. */
export const TASK_ID_VARIABLE = 'DELEGATE_TASK_ID';

/** How long a kill waits for the task's last process to be gone before saying it is still stopping. */
export const STOP_WAIT_MS = 10_000;
const POLL_MS = 50;

/**
 * Ends every process of a task and returns once all are gone: the worker's process group (only
 * while that very process lives: a reused pid is left alone), every command group it recorded
 * (TERM, then KILL), and every process that carries the task's id in its environment — a
 * command may start between the worker spawning it and recording it, and one in the OS sandbox
 * runs in a session and PID namespace of its own. Those are killed again and again until none
 * is left, since one may fork while the scan runs, and a PID namespace takes a moment to go.
 *
 * Resolves with the pids still running after `waitMs` (empty: everything is gone).
 */
export async function killTask(job: JobFile, waitMs = STOP_WAIT_MS): Promise<number[]> {
  const workerAlive = job.worker !== undefined && isProcessAlive(job.worker);
  const groups = [
    ...(workerAlive && job.worker ? [job.worker.pid] : []),
    ...(job.childPgids ?? []),
  ];
  // Seen once, waited for until gone: a namespace's first process stays until all in it are.
  const seen = new Map<number, ProcessIdentity>();
  const scan = (shouldKill: boolean) => {
    for (const identity of taskProcessIdentities(job.id)) {
      seen.set(identity.pid, identity);
      if (shouldKill) signal(identity.pid, 'SIGKILL');
    }
  };
  // Looked at before the groups go (a dying process's environment can no longer be read), and
  // left alone until the worker has had its SIGTERM to clean up.
  scan(false);
  // A task's commands on a runner run there: killed there, whatever happens here.
  const remote = job.runner
    ? killRemoteCommand({
        runner: job.runner,
        dataHome: resolveDataHome(process.env),
        env: process.env,
      })
    : undefined;
  await Promise.all(groups.map((pgid) => killProcessGroup(pgid)));
  await remote;
  const deadline = Date.now() + waitMs;
  for (;;) {
    scan(true);
    const running = [
      ...[...seen.values()].filter(isProcessAlive).map((identity) => identity.pid),
      ...groups.filter(isProcessGroupAlive).map((pgid) => -pgid),
    ];
    if (running.length === 0 || Date.now() >= deadline) return running.map(Math.abs);
    for (const pgid of groups) signal(-pgid, 'SIGKILL');
    await sleep(POLL_MS);
  }
}

/**
 * How long an ended task's processes get to exit by themselves before they are killed: its worker
 * writes the task's end first, then settles its attempts and closes its sandbox.
 */
const ENDING_GRACE_MS = 3_000;
/** Rounds of looking again: a process may be starting one (a check, a bridge) as it is killed. */
const KILL_ROUNDS = 20;

/**
 * Leaves no process of the task: every process carrying its id, and its recorded worker (the only
 * one found where /proc cannot be read), gets `graceMs` to exit by itself, then SIGKILL, looking
 * again until none is left. Whatever removes a task's files or worktree calls this first: an ended
 * task's worker may still be writing there, and a removal racing it fails (ENOTEMPTY) or is undone.
 * Resolves with the pids still running after the last round (empty: everything is gone).
 */
export async function endTaskProcesses(
  id: string,
  { worker, graceMs = ENDING_GRACE_MS }: { worker?: ProcessIdentity; graceMs?: number } = {},
): Promise<number[]> {
  const running = () => {
    const pids = new Set(processesOfTask(id));
    if (worker && worker.pid !== process.pid && isProcessAlive(worker)) pids.add(worker.pid);
    return [...pids];
  };
  const graceEnds = Date.now() + graceMs;
  while (Date.now() < graceEnds && running().length > 0) await sleep(POLL_MS);
  for (let round = 0; round < KILL_ROUNDS; round += 1) {
    const pids = running();
    if (pids.length === 0) return [];
    for (const pid of pids) signal(pid, 'SIGKILL');
    await sleep(POLL_MS);
  }
  return running();
}

/** Processes whose environment holds DELEGATE_TASK_ID=<id> (Linux /proc; none elsewhere). */
export function processesOfTask(id: string): number[] {
  return taskProcessIdentities(id).map((identity) => identity.pid);
}

/** The task's running processes (by the variable), never this process itself, with start times. */
function taskProcessIdentities(id: string): ProcessIdentity[] {
  const marker = `\0${TASK_ID_VARIABLE}=${id}\0`;
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  } catch {
    return [];
  }
  return entries.flatMap((entry) => {
    const pid = Number(entry);
    if (pid === process.pid) return [];
    try {
      // The start time first: a process read after it would be another one's environment.
      const stat = parseProcessStat(readFileSync(`/proc/${entry}/stat`, 'utf8'));
      if (!stat || stat.state === 'Z' || stat.state === 'X') return [];
      const environment = `\0${readFileSync(`/proc/${entry}/environ`, 'latin1')}\0`;
      return environment.includes(marker) ? [{ pid, startTime: stat.startTime }] : [];
    } catch {
      return [];
    }
  });
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Gone meanwhile.
  }
}
