import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { SandboxRuntimeConfig } from '@anthropic-ai/sandbox-runtime';
import type { Environment } from '../config/paths.ts';
import { errorMessage, UserError } from '../util/user-error.ts';
import type { SandboxPolicy } from './sandbox-policy.ts';
import { createPidsGroup } from './pids-cgroup.ts';
import { closeSession, probeSession, startSession, withSessionLease } from './sandbox-session.ts';
import { shellQuote } from '../util/shell-quote.ts';

export { BWRAP_PATH_VARIABLE } from './sandbox-session.ts';

type RuntimeConfig = SandboxRuntimeConfig;
type PathEntry = { path: string; literal: true };

export interface SandboxCheck {
  isAvailable: boolean;
  /** Why it is not available (the library's or the probe's words). */
  reason?: string;
  /** What it cannot enforce here although it runs (e.g. no seccomp helper for this CPU). */
  warnings: string[];
}

/** A command ready to spawn with `bash -c`, and what to call once it has ended. */
export interface PreparedCommand {
  script: string;
  /** Frees the command's sandbox bookkeeping; call once it has ended (or never started). */
  release: () => void;
}

/**
 * Whether commands can run in the OS sandbox here: the platform is supported, bubblewrap,
 * socat and ripgrep (Linux) are there, and (unless `shouldProbe` is false, for a process that
 * only runs what another one already probed) a probe command really ran inside it.
 */
export async function checkSandbox(env: Environment, shouldProbe = true): Promise<SandboxCheck> {
  try {
    const manager = await startSession(env);
    if (shouldProbe) await probeSession(manager);
    return { isAvailable: true, warnings: manager.checkDependencies().warnings };
  } catch (error) {
    return { isAvailable: false, reason: errorMessage(error), warnings: [] };
  }
}

/**
 * Wraps `command` so it runs under `policy` (bubblewrap on Linux, sandbox-exec on macOS),
 * within its resource limits, with TMPDIR and XDG_CACHE_HOME in the task's temp folder.
 * Without a policy it is unchanged.
 */
export async function prepareCommand(
  command: string,
  policy: SandboxPolicy | undefined,
  env: Environment,
): Promise<PreparedCommand> {
  if (!policy) return { script: command, release: () => undefined };
  const manager = await startSession(env);
  mkdirSync(policy.tmpDir, { recursive: true });
  const commandId = randomBytes(16).toString('base64url');
  const { processes, memoryMb } = policy.limits;
  const inner =
    // Soft and hard, so the command cannot raise them; where a limit is already lower, it stays.
    `ulimit -u ${processes} 2>/dev/null; ulimit -d ${memoryMb * 1024} 2>/dev/null; ` +
    `export TMPDIR=${shellQuote(policy.tmpDir)} XDG_CACHE_HOME=${shellQuote(join(policy.tmpDir, '.cache'))}; ` +
    command;
  const wrapped = await manager.wrapWithSandbox(inner, 'bash', filesystemOf(policy), undefined, {
    commandId,
    commandText: command,
  });
  // Entered before bubblewrap starts, so nothing the command starts is outside the group.
  const group = createPidsGroup(processes);
  const script = group ? `${group.enter}${wrapped}` : wrapped;
  let isReleased = false;
  const release = () => {
    if (isReleased) return;
    isReleased = true;
    manager.unregisterCommandNetworkLists(commandId);
    manager.cleanupAfterCommand();
    group?.remove();
  };
  try {
    if (policy.allowHosts.length > 0) {
      manager.registerCommandNetworkLists(commandId, { allowedDomains: policy.allowHosts });
    }
  } catch (error) {
    release();
    throw new UserError(`The sandbox refused the allowed hosts: ${errorMessage(error)}`);
  }
  return { script, release };
}

/**
 * Stops this process's sandbox session (its proxies and socat bridges keep the event loop
 * alive): the worker calls it once the task is over so it can exit. A no-op when none started.
 */
export const closeSandbox = closeSession;
export const withSandboxLease = withSessionLease;

/** What to tell a user whose machine has no usable sandbox. */
export function sandboxInstallHint(platform: NodeJS.Platform = process.platform): string {
  if (platform === 'linux') {
    return 'Install bubblewrap, socat and ripgrep (Debian/Ubuntu: apt-get install bubblewrap socat ripgrep; Fedora: dnf install bubblewrap socat ripgrep).';
  }
  if (platform === 'darwin') return 'Install ripgrep (brew install ripgrep).';
  return `The OS sandbox runs on Linux and macOS only, not on ${platform}.`;
}

/**
 * The policy as the library's per-command filesystem rules. Entries are literal paths (a
 * folder named `[WIP]` is not a glob). The library's own extra write spots (`/tmp/claude`,
 * `~/.npm/_logs`, `~/.claude/debug`) are closed: only the task's folders are writable.
 */
function filesystemOf(policy: SandboxPolicy): Partial<RuntimeConfig> {
  const literal = (paths: readonly string[]): PathEntry[] =>
    paths.map((path) => ({ path, literal: true }));
  return {
    filesystem: {
      allowWrite: literal(policy.writable),
      denyWrite: literal([
        ...policy.readOnly,
        '/tmp/claude',
        '/private/tmp/claude',
        join(policy.home, '.npm', '_logs'),
        join(policy.home, '.claude', 'debug'),
      ]),
      denyRead: literal(policy.unreadable),
      allowRead: literal(policy.readable),
    },
  };
}
