import type { Environment } from '../config/paths.ts';
import type { SandboxMode } from '../config/config-rules.ts';
import { UserError } from '../util/user-error.ts';
import { checkSandbox, sandboxInstallHint, type SandboxCheck } from './os-sandbox.ts';
import { recordedSandboxCheck, recordSandboxCheck } from './sandbox-record.ts';

export interface SandboxDecision {
  sandboxed: boolean;
  /** Why the task runs unsandboxed, or what the sandbox cannot enforce here. */
  note?: string;
  /**
   * Decided on an earlier process's check (sandbox-record.ts), not on a probe of this one: the
   * task's worker probes the sandbox itself before its first command.
   */
  onRecord?: boolean;
}

/**
 * Whether a task's commands run in the OS sandbox, decided once at task_start: `off` never,
 * `auto` whenever it works here (else unsandboxed, and the task says so), `required` or the
 * task is refused with what to install.
 */
export async function decideSandbox(
  mode: SandboxMode,
  env: Environment,
  dataHome: string,
  { isLongLived = false }: { isLongLived?: boolean } = {},
): Promise<SandboxDecision> {
  if (mode === 'off') return { sandboxed: false, note: 'sandbox is "off" in the configuration' };
  const check = workingHere ?? (await checkOnce(env, dataHome, isLongLived));
  if (check.isAvailable) {
    return {
      sandboxed: true,
      ...(check.warnings.length > 0 ? { note: check.warnings.join('; ') } : {}),
      ...(check === onRecord ? { onRecord: true } : {}),
    };
  }
  const why = `the OS sandbox is not available here: ${check.reason ?? 'unknown reason'}.`;
  if (mode === 'required') {
    throw new UserError(
      `sandbox is "required" but ${why} ${sandboxInstallHint()} ` +
        'Or set "sandbox": "auto" in config.json to run tasks unsandboxed (they say so).',
    );
  }
  return { sandboxed: false, note: `${why} ${sandboxInstallHint()}` };
}

/** A sandbox that worked in this process once; a failure is checked again at the next task. */
let workingHere: SandboxCheck | undefined;
/** The check taken from the record, while it is this process's `workingHere`. */
let onRecord: SandboxCheck | undefined;

/**
 * The check on record from an earlier process (sandbox-record.ts), else a fresh one, recorded.
 * A long-lived process (the MCP server) taking the record probes for itself a moment later, off
 * any start's path: the tasks it starts after that are decided on its own probe, and their
 * workers need none.
 */
async function checkOnce(
  env: Environment,
  dataHome: string,
  isLongLived: boolean,
): Promise<SandboxCheck> {
  const recorded = recordedSandboxCheck(dataHome, env);
  if (recorded) {
    if (isLongLived) {
      const afterMs = Number(env[PROBE_AFTER_VARIABLE]) || PROBE_AFTER_MS;
      setTimeout(() => {
        probeForItself(env, dataHome, recorded).catch(() => undefined);
      }, afterMs).unref();
    }
    return (workingHere = onRecord = recorded);
  }
  const check = await checkSandbox(env);
  recordSandboxCheck(dataHome, env, check);
  if (check.isAvailable) workingHere = check;
  return check;
}

/** After the start that took the record has gone its way (the sandbox library loads in 30 ms). */
const PROBE_AFTER_MS = 2_000;
/** Tests set when a server taking the record probes for itself. */
export const PROBE_AFTER_VARIABLE = 'DELEGATE_SANDBOX_PROBE_AFTER_MS_FOR_TEST';

async function probeForItself(
  env: Environment,
  dataHome: string,
  recorded: SandboxCheck,
): Promise<void> {
  if (workingHere !== recorded) return;
  const check = await checkSandbox(env);
  recordSandboxCheck(dataHome, env, check);
  // Starts meanwhile went on the record; from now on they go on this (a failure: checked afresh).
  if (workingHere !== recorded) return;
  onRecord = undefined;
  workingHere = check.isAvailable ? check : undefined;
}
