import { readFileSync } from 'node:fs';

/** A process as other processes can check it later: pid plus its start time (guards against pid reuse). */
export interface ProcessIdentity {
  pid: number;
  /** Field 22 of `/proc/<pid>/stat` (clock ticks since boot) on Linux; '' where unavailable. */
  startTime: string;
}

/** The two fields of `/proc/<pid>/stat` that tell whether a process still runs. */
export interface ProcessStat {
  /** One letter: R, S, D, T, Z (zombie), X (dead), ... */
  state: string;
  startTime: string;
}

/**
 * Reads the state and start time out of a `/proc/<pid>/stat` line. The command name (field 2)
 * is in parentheses and may itself contain spaces and ')', so fields resume after the last ')'.
 */
export function parseProcessStat(text: string): ProcessStat | undefined {
  const commEnd = text.lastIndexOf(')');
  if (commEnd < 0) return undefined;
  // The rest starts at field 3 (state), so field 22 (start time) is at index 19.
  const fields = text
    .slice(commEnd + 1)
    .trim()
    .split(/\s+/);
  const state = fields[0];
  const startTime = fields[19];
  if (!state || !startTime) return undefined;
  return { state, startTime };
}

function readProcessStat(pid: number): ProcessStat | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    return parseProcessStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** This process's identity: read once (a process's start time never changes), a copy each time. */
export function currentProcessIdentity(): ProcessIdentity {
  if (own?.pid !== process.pid || own.startTime === '') own = processIdentity(process.pid);
  return { ...own };
}

let own: ProcessIdentity | undefined;

/** Another process's identity now (its start time '' off Linux, or when it is gone). */
export function processIdentity(pid: number): ProcessIdentity {
  return { pid, startTime: readProcessStat(pid)?.startTime ?? '' };
}

/**
 * True while that very process runs: false for a dead pid, a zombie (state Z in
 * `/proc/<pid>/stat`), or a reused pid with another start time. Off Linux (or where
 * `/proc/<pid>` is hidden): `process.kill(pid, 0)`, where EPERM means alive.
 */
export function isProcessAlive(identity: ProcessIdentity): boolean {
  const { pid, startTime } = identity;
  // kill() reads 0 and negative pids as process groups: never one process, never "alive".
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  const stat = readProcessStat(pid);
  if (stat) {
    // kill(pid, 0) succeeds on a zombie, and containers often have no init reaping them.
    const isRunning = stat.state !== 'Z' && stat.state !== 'X';
    return isRunning && (startTime === '' || stat.startTime === startTime);
  }
  return signalZeroReachesProcess(pid);
}

function signalZeroReachesProcess(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
