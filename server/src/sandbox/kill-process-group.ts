import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

const POLL_MS = 20;
/** After SIGKILL the kernel needs a moment to tear processes down. */
const KILL_SETTLE_MS = 2_000;

/**
 * Ends a process group: SIGTERM (and SIGCONT, so stopped members get it), then SIGKILL
 * after `graceMs` if any member still runs. Resolves once none runs or the wait ran out;
 * never throws.
 */
export async function killProcessGroup(pgid: number, graceMs = 500): Promise<void> {
  // 0 and 1 would signal our own group or every process we may signal.
  if (!Number.isSafeInteger(pgid) || pgid <= 1) return;
  try {
    if (!signalGroup(pgid, 'SIGTERM')) return;
    signalGroup(pgid, 'SIGCONT');
    if (await waitUntilGone(pgid, graceMs)) return;
    signalGroup(pgid, 'SIGKILL');
    await waitUntilGone(pgid, KILL_SETTLE_MS);
  } catch {
    // Cleanup is best effort: a caller in a finally block must not fail over it.
  }
}

/**
 * True while a member of the group runs. On Linux from `/proc` (zombies count as gone:
 * `kill(-pgid, 0)` still reaches them and containers often have no init to reap them);
 * elsewhere from `kill(-pgid, 0)`.
 */
export function isProcessGroupAlive(pgid: number): boolean {
  if (process.platform === 'linux') {
    try {
      return readdirSync('/proc').some(
        (entry) => /^\d+$/.test(entry) && isRunningMember(entry, pgid),
      );
    } catch {
      // /proc unreadable: fall through to the signal probe.
    }
  }
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function isRunningMember(pid: string, pgid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return false;
  }
  // Fields resume after the command name's last ')': state, ppid, pgrp, ...
  const [state, , group] = stat
    .slice(stat.lastIndexOf(')') + 1)
    .trim()
    .split(/\s+/);
  return Number(group) === pgid && state !== 'Z' && state !== 'X';
}

function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

async function waitUntilGone(pgid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!isProcessGroupAlive(pgid)) return true;
    if (Date.now() >= deadline) return false;
    await sleep(POLL_MS);
  }
}
