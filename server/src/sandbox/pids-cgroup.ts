import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { shellQuote } from '../util/shell-quote.ts';

const CGROUP_ROOT = '/sys/fs/cgroup';
const REMOVE_TRIES = 20;
const REMOVE_RETRY_MS = 250;
/** A group older than this whose processes are all gone was left by a process that died first. */
const STALE_MS = 60_000;

/** A pids cgroup made for one command: the script that enters it, and its removal. */
export interface PidsGroup {
  /** Shell text that moves the shell running it (and so all it starts) into the group. */
  enter: string;
  /** Removes the group once its processes are gone (retried for a while in the background). */
  remove: () => void;
}

/**
 * Where this process may make cgroups with a `pids.max`: its own cgroup in the v1 `pids`
 * hierarchy, or in the unified (v2) one when the pids controller is enabled for its children.
 * Root can, and a user whose session cgroup is delegated can; elsewhere there is none.
 */
function candidateParents(): string[] {
  let lines: string[];
  try {
    lines = readFileSync('/proc/self/cgroup', 'utf8').split('\n');
  } catch {
    return [];
  }
  const parents: string[] = [];
  for (const line of lines) {
    const [, controllers = '', path = ''] = line.split(':');
    if (controllers.split(',').includes('pids')) parents.push(join(CGROUP_ROOT, 'pids', path));
    if (line.startsWith('0::')) {
      parents.push(join(CGROUP_ROOT, path), join(CGROUP_ROOT, 'unified', path));
    }
  }
  return parents;
}

/**
 * A new pids cgroup holding at most `limit` processes (threads included), or undefined where
 * none can be made. RLIMIT_NPROC caps a sandboxed command of an ordinary user (its own user
 * namespace counts only its processes) but never root's; this caps root's too.
 */
export function createPidsGroup(limit: number): PidsGroup | undefined {
  for (const parent of candidateParents()) {
    removeStale(parent);
    const dir = join(parent, `delegate-${randomBytes(6).toString('hex')}`);
    try {
      mkdirSync(dir);
    } catch {
      continue;
    }
    try {
      writeFileSync(join(dir, 'pids.max'), String(limit));
      return {
        enter: `echo $$ > ${shellQuote(join(dir, 'cgroup.procs'))} && `,
        remove: () => removeLater(dir),
      };
    } catch {
      removeLater(dir);
    }
  }
  return undefined;
}

/** Empty groups of ours that a process killed before its clean-up left behind. */
function removeStale(parent: string): void {
  let names: string[];
  try {
    names = readdirSync(parent).filter((name) => name.startsWith('delegate-'));
  } catch {
    return;
  }
  for (const name of names) {
    try {
      const dir = join(parent, name);
      if (Date.now() - statSync(dir).mtimeMs > STALE_MS) rmdirSync(dir);
    } catch {
      // Still in use, or someone else's to remove.
    }
  }
}

/** rmdir fails while the group still has processes (a PID namespace takes a moment to go). */
function removeLater(dir: string, tries = REMOVE_TRIES): void {
  try {
    rmdirSync(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || tries <= 1) return;
    setTimeout(() => removeLater(dir, tries - 1), REMOVE_RETRY_MS).unref();
  }
}
