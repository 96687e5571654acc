import type { Environment } from '../config/paths.ts';
import type { SandboxMode } from '../config/schema.ts';
import { UserError } from '../util/user-error.ts';
import { checkSandbox, sandboxInstallHint, type SandboxCheck } from './os-sandbox.ts';

export interface SandboxDecision {
  sandboxed: boolean;
  /** Why the task runs unsandboxed, or what the sandbox cannot enforce here. */
  note?: string;
}

/**
 * Whether a task's commands run in the OS sandbox, decided once at task_start: `off` never,
 * `auto` whenever it works here (else unsandboxed, and the task says so), `required` or the
 * task is refused with what to install.
 */
export async function decideSandbox(mode: SandboxMode, env: Environment): Promise<SandboxDecision> {
  if (mode === 'off') return { sandboxed: false, note: 'sandbox is "off" in the configuration' };
  const check = workingHere ?? (await checkOnce(env));
  if (check.isAvailable) {
    return check.warnings.length > 0
      ? { sandboxed: true, note: check.warnings.join('; ') }
      : { sandboxed: true };
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

async function checkOnce(env: Environment): Promise<SandboxCheck> {
  const check = await checkSandbox(env);
  if (check.isAvailable) workingHere = check;
  return check;
}
