/**
 * What a runner offers, asked over ssh before a task starts there (and by `providers` and
 * `delegate doctor`): the login and host key, git, a shell, a writable workdir, bubblewrap.
 */
import type { RunnerConfig } from '../config/schema.ts';
import type { SandboxMode } from '../config/config-rules.ts';
import { shellQuote } from '../util/shell-quote.ts';
import { UserError } from '../util/user-error.ts';
import { runSsh, sshFailure, sshFailureError, type RunnerAddress } from './ssh.ts';

export interface RunnerFacts {
  /** Why the runner cannot take tasks; undefined when it can. */
  problem?: string;
  git?: string;
  shell?: 'bash' | 'sh';
  /** bubblewrap runs there (`missing` or `broken` otherwise). */
  bwrap?: 'ok' | 'missing' | 'broken';
}

interface Context {
  dataHome: string;
  env: Record<string, string | undefined>;
}

const CHECK_TIMEOUT_MS = 30_000;

/** A runner's `maxTasks` when the config sets none. */
export const DEFAULT_RUNNER_TASKS = 4;

export function runnerAddress(name: string, runner: RunnerConfig): RunnerAddress {
  return {
    name,
    host: runner.host,
    workdir: runner.workdir.replace(/\/+$/, '') || '/',
    ...(runner.port ? { port: runner.port } : {}),
    ...(runner.user ? { user: runner.user } : {}),
    ...(runner.identityFile ? { identityFile: runner.identityFile } : {}),
    ...(runner.knownHostsFile ? { knownHostsFile: runner.knownHostsFile } : {}),
  };
}

/** Logs in and looks; a refused login or unknown host key is the problem, with what to do. */
export async function checkRunner(runner: RunnerAddress, context: Context): Promise<RunnerFacts> {
  const script = [
    `echo "git=$(git --version 2>/dev/null)"`,
    'if command -v bash >/dev/null 2>&1; then echo shell=bash; else echo shell=sh; fi',
    `W=${shellQuote(runner.workdir)}`,
    'if mkdir -p "$W" 2>/dev/null && [ -w "$W" ]; then echo workdir=ok; else echo workdir=no; fi',
    'if ! command -v bwrap >/dev/null 2>&1; then echo bwrap=missing',
    'elif bwrap --ro-bind / / --dev /dev --proc /proc --unshare-all --die-with-parent --new-session true >/dev/null 2>&1; then echo bwrap=ok',
    'else echo bwrap=broken; fi',
  ].join('\n');
  const result = await runSsh(runner, script, context, { timeoutMs: CHECK_TIMEOUT_MS });
  const failure = sshFailure(result);
  if (failure) {
    return { problem: (await sshFailureError(runner, failure, result, context.env)).message };
  }
  const facts = Object.fromEntries(
    result.stdout
      .toString()
      .split('\n')
      .flatMap((line) => {
        const at = line.indexOf('=');
        return at > 0 ? [[line.slice(0, at), line.slice(at + 1).trim()]] : [];
      }),
  ) as Record<string, string | undefined>;
  const found: RunnerFacts = {
    ...(facts.git ? { git: facts.git } : {}),
    shell: facts.shell === 'bash' ? 'bash' : 'sh',
    bwrap: facts.bwrap === 'ok' ? 'ok' : facts.bwrap === 'broken' ? 'broken' : 'missing',
  };
  if (result.code !== 0 || facts.workdir === undefined) {
    return {
      ...found,
      problem: `Runner "${runner.name}": the check failed there (exit ${result.code}): ${result.stderr.trim().slice(-300)}`,
    };
  }
  if (!facts.git) {
    return {
      ...found,
      problem: `Runner "${runner.name}" has no git: install git there (the task's files travel with it).`,
    };
  }
  if (facts.workdir !== 'ok') {
    return {
      ...found,
      problem: `Runner "${runner.name}": workdir ${runner.workdir} cannot be made or written by ${runner.user ?? 'the login user'}; create it there with that owner, or point workdir elsewhere.`,
    };
  }
  return found;
}

/**
 * Whether a task's commands run in bubblewrap on the runner, by the sandbox mode: `required`
 * refuses a runner without a working bubblewrap; `auto` runs unsandboxed there and says so.
 */
export function runnerSandbox(
  name: string,
  facts: RunnerFacts,
  mode: SandboxMode,
): { sandboxed: boolean; note?: string } {
  if (mode === 'off') return { sandboxed: false, note: 'sandbox is "off" in the config' };
  if (facts.bwrap === 'ok') return { sandboxed: true };
  const why =
    facts.bwrap === 'broken'
      ? `bubblewrap does not work on runner "${name}" (user namespaces disabled?)`
      : `bubblewrap is not installed on runner "${name}"`;
  if (mode === 'required') {
    throw new UserError(
      `sandbox is "required", but ${why}. Install bubblewrap there (apt-get install bubblewrap), or set "sandbox": "auto" to run its commands unsandboxed (it says so).`,
    );
  }
  return { sandboxed: false, note: why };
}
