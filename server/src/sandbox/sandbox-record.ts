import { createHash } from 'node:crypto';
import { readFileSync, rmSync, statSync } from 'node:fs';
import { uptime } from 'node:os';
import { delimiter, isAbsolute, join } from 'node:path';
import type { Environment } from '../config/paths.ts';
import { writeFileAtomicSync } from '../util/atomic-write.ts';
import { readJsonFile } from '../util/read-json.ts';
import type { SandboxCheck } from './os-sandbox.ts';
import { BWRAP_PATH_VARIABLE } from './sandbox-session.ts';

/** How long a passed sandbox check stands for the processes after it. */
export const SANDBOX_RECORD_MAX_AGE_MS = 60 * 60_000;

/**
 * A sandbox check that passed (the library started, a probe command ran inside bubblewrap),
 * kept in the data home for the processes after it: the first `task_start` of each session and
 * every CLI start (`delegate start`, a subagent on a worker) would otherwise spend about 200 ms
 * on the same probe (about 110 ms of their wall time, as the worker starts beside it). It stands
 * for {@link SANDBOX_RECORD_MAX_AGE_MS} on this boot, for this user, with the same PATH and the
 * same bubblewrap file (a reinstall or upgrade changes its identity), and for this copy of
 * delegate. A failed check is never kept, and one that fails removes it.
 *
 * It cannot make a task run unsandboxed: a task decided sandboxed on its word carries
 * `sandboxOnRecord`, and the process about to run its first command (its worker, or task_start
 * for a preflight) runs a probe first; a probe that fails fails the task and removes the record.
 * Every command runs inside bubblewrap or not at all. What a wrong record changes is only that
 * such a task fails, where a fresh check under `"sandbox": "auto"` would have run it
 * unsandboxed and said so.
 */
export function sandboxRecordPath(dataHome: string): string {
  return join(dataHome, 'sandbox-check.json');
}

/** The passed check on record for this machine and environment, if it still stands. */
export function recordedSandboxCheck(
  dataHome: string,
  env: Environment,
  now = Date.now(),
): SandboxCheck | undefined {
  const key = environmentKey(env);
  if (key === undefined) return undefined;
  const read = readJsonFile(sandboxRecordPath(dataHome));
  if (!read || !('value' in read)) return undefined;
  const record = read.value as { key?: unknown; checkedAt?: unknown; warnings?: unknown };
  const age = typeof record.checkedAt === 'number' ? now - record.checkedAt : -1;
  const warnings = record.warnings;
  if (
    record.key !== key ||
    age < 0 ||
    age >= SANDBOX_RECORD_MAX_AGE_MS ||
    !Array.isArray(warnings) ||
    !warnings.every((warning) => typeof warning === 'string')
  ) {
    return undefined;
  }
  return { isAvailable: true, warnings };
}

/** Keeps a passed check for the processes after this one; a failed one removes the record. */
export function recordSandboxCheck(
  dataHome: string,
  env: Environment,
  check: SandboxCheck,
  now = Date.now(),
): void {
  const key = check.isAvailable ? environmentKey(env) : undefined;
  if (key === undefined) {
    forgetSandboxCheck(dataHome);
    return;
  }
  try {
    writeFileAtomicSync(
      sandboxRecordPath(dataHome),
      `${JSON.stringify({ key, checkedAt: now, warnings: check.warnings })}\n`,
    );
  } catch {
    // Not kept: the next process checks again.
  }
}

/** Removes the record: the sandbox was found not working. */
export function forgetSandboxCheck(dataHome: string): void {
  try {
    rmSync(sandboxRecordPath(dataHome), { force: true });
  } catch {
    // Already gone, or not removable: it lapses with its age.
  }
}

/**
 * What a check's result depends on, hashed: the boot, the user, PATH, the bubblewrap file the
 * library will run (its path and identity), and this copy of delegate. Undefined when there is
 * no bubblewrap to name: such a check is not kept.
 */
export function environmentKey(env: Environment): string | undefined {
  const bwrap = bubblewrapFile(env);
  if (!bwrap) return undefined;
  let identity: string;
  try {
    const stats = statSync(bwrap);
    identity = `${stats.dev}:${stats.ino}:${stats.size}:${Math.floor(stats.mtimeMs)}`;
  } catch {
    return undefined;
  }
  const parts = [
    process.platform,
    String(process.getuid?.() ?? ''),
    bootId(),
    env.PATH ?? '',
    bwrap,
    identity,
    // The folder of delegate's code (dist/chunks once bundled): another copy or version checks afresh.
    new URL('.', import.meta.url).href,
  ];
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

/** The bubblewrap the library runs: the test override, else the first `bwrap` on PATH. */
function bubblewrapFile(env: Environment): string | undefined {
  const override = env[BWRAP_PATH_VARIABLE]?.trim();
  if (override) return override;
  for (const folder of (env.PATH ?? '').split(delimiter)) {
    if (!folder || !isAbsolute(folder)) continue;
    const candidate = join(folder, 'bwrap');
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // Not in this folder.
    }
  }
  return undefined;
}

/** This boot: Linux names it; elsewhere the minute the machine started stands in. */
function bootId(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return String(Math.round((Date.now() / 1000 - uptime()) / 60));
  }
}
