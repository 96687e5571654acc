import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isProcessGroupAlive, killProcessGroup } from '../sandbox/kill-process-group.ts';
import {
  isProcessAlive,
  parseProcessStat,
  type ProcessIdentity,
} from '../util/process-identity.ts';
import type { JobFile } from '../store/job-file.ts';
import { jobDir } from '../store/job-store.ts';
import { killRemoteCommand } from '../runners/remote-shell.ts';

/** Set in the environment of the worker and of everything it runs, so the whole tree can be found. */
export const TASK_ID_VARIABLE = 'DELEGATE_TASK_ID';

/** How long a kill waits for the task's last process to be gone before saying it is still stopping. */
export const STOP_WAIT_MS = 10_000;
const POLL_MS = 50;
/** A host answers within a turn of its event loop: looked at more often. */
const HOST_POLL_MS = 5;

/** How long a stop waits for a hosted task to unwind and leave its host. */
export const HOSTED_STOP_MS = 5_000;

/**
 * While this file is in a hosted task's folder, the task is in its host: the server writes it
 * before the host hears of the task, the host removes it once the task's work there is over.
 */
export function hostedMarkerPath(dataHome: string, id: string): string {
  return join(jobDir(dataHome, id), 'hosted');
}

/** A stop asked of a task's host (it looks on SIGUSR2, and before it starts the task). */
export function stopRequestPath(dataHome: string, id: string): string {
  return join(jobDir(dataHome, id), 'stop');
}

/**
 * Whether the task's worker still runs it: that very process lives (a reused pid is not it),
 * and, for a task host, the task is still in it.
 */
export function isWorkerAlive(dataHome: string, job: Pick<JobFile, 'id' | 'worker'>): boolean {
  const worker = job.worker;
  if (!worker || !isProcessAlive(worker)) return false;
  return !worker.hosted || existsSync(hostedMarkerPath(dataHome, job.id));
}

/**
 * Ends every process of a task and returns once all are gone: the worker's process group (only
 * while that very process lives: a reused pid is left alone), every command group it recorded
 * (TERM, then KILL), and every process that carries the task's id in its environment — a
 * command may start between the worker spawning it and recording it, and one in the OS sandbox
 * runs in a session and PID namespace of its own. Those are killed again and again until none
 * is left, since one may fork while the scan runs, and a PID namespace takes a moment to go.
 * A task host runs other tasks too: it is asked to stop this one (see {@link stopHostedTask}),
 * never killed.
 *
 * Resolves with the pids still running after `waitMs` (empty: everything is gone).
 */
export async function killTask(
  dataHome: string,
  job: JobFile,
  waitMs = STOP_WAIT_MS,
): Promise<number[]> {
  const workerAlive = job.worker !== undefined && isProcessAlive(job.worker);
  const isHosted = job.worker?.hosted === true;
  const groups = [
    ...(workerAlive && job.worker && !isHosted ? [job.worker.pid] : []),
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
    ? killRemoteCommand({ runner: job.runner, dataHome, env: process.env })
    : undefined;
  // A hosted task hears of its stop before its commands die: their end is then its stop's, not
  // a failure of the work to record.
  const hostDeadline = Date.now() + HOSTED_STOP_MS;
  if (isHosted) await askHostToStop(dataHome, job, hostDeadline);
  await Promise.all(groups.map((pgid) => killProcessGroup(pgid)));
  if (isHosted) await untilHostLetsGo(dataHome, job, hostDeadline);
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
 * Asks the task's host to stop it and waits, up to {@link HOSTED_STOP_MS}, for the task to
 * unwind and leave: its model call is aborted at once, a command it waits on ends once killed
 * (killTask kills them once the host has heard). A host that does not let go in time is left
 * running its other tasks: the task is ended by its stopper all the same, and the host's next
 * look at it finds it ended.
 */
export async function stopHostedTask(
  dataHome: string,
  job: Pick<JobFile, 'id' | 'worker'>,
  waitMs = HOSTED_STOP_MS,
): Promise<void> {
  const deadline = Date.now() + waitMs;
  await askHostToStop(dataHome, job, deadline);
  await untilHostLetsGo(dataHome, job, deadline);
}

/**
 * The request file, then SIGUSR2; resolves once the host has heard (it removes the file as it
 * stops the task), the task is no longer in it, or the deadline passed. A task the host has not
 * started yet keeps the file, and the host will not start it.
 */
async function askHostToStop(
  dataHome: string,
  job: Pick<JobFile, 'id' | 'worker'>,
  deadline: number,
): Promise<void> {
  if (!job.worker || !isWorkerAlive(dataHome, job)) return;
  const request = stopRequestPath(dataHome, job.id);
  try {
    writeFileSync(request, '');
  } catch {
    // Its folder is gone: so is the task, for the host.
    return;
  }
  signal(job.worker.pid, 'SIGUSR2');
  while (Date.now() < deadline && existsSync(request) && isWorkerAlive(dataHome, job))
    await sleep(HOST_POLL_MS);
}

async function untilHostLetsGo(
  dataHome: string,
  job: Pick<JobFile, 'id' | 'worker'>,
  deadline: number,
): Promise<void> {
  while (Date.now() < deadline && isWorkerAlive(dataHome, job)) await sleep(HOST_POLL_MS);
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
  dataHome: string,
  job: Pick<JobFile, 'id' | 'worker'>,
  { graceMs = ENDING_GRACE_MS }: { graceMs?: number } = {},
): Promise<number[]> {
  const { id, worker } = job;
  // A task host is never killed for one task: it is asked to let this one go (it has ended).
  if (worker?.hosted) await stopHostedTask(dataHome, job, Math.max(graceMs, POLL_MS));
  const running = () => {
    const pids = new Set(processesOfTask(id));
    if (worker && !worker.hosted && worker.pid !== process.pid && isProcessAlive(worker))
      pids.add(worker.pid);
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
