import { spawn } from 'node:child_process';
import { prepareCommand, type SandboxPolicy } from '../sandbox/index.ts';
import { killProcessGroup } from '../sandbox/kill-process-group.ts';
import { errorMessage, TaskError } from '../util/user-error.ts';
import type { VerificationFacts } from '../store/job-file.ts';
import { runRemoteCommand, type RemoteTask } from '../runners/remote-shell.ts';

const TAIL_CHARS = 3_000;

/**
 * Runs the task's test command in its directory (bash, stdin closed, own process group, the
 * whole group killed at the timeout) and returns the facts: exit code, output tail, time.
 * It runs code the worker wrote, so with a sandbox policy it runs inside the same OS sandbox
 * as the worker's commands.
 */
export async function runTestCommand(
  command: string,
  cwd: string,
  env: Record<string, string>,
  timeoutMs: number,
  sandbox?: SandboxPolicy,
  remote?: RemoteTask,
): Promise<VerificationFacts> {
  if (remote) return runTestsOnRunner(command, remote, timeoutMs);
  const run = collectFacts(command);
  let script: string;
  let release: () => void;
  try {
    ({ script, release } = await prepareCommand(command, sandbox, env));
  } catch (error) {
    return run.facts(null, `[could not set up the OS sandbox: ${errorMessage(error)}]`);
  }
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], {
      cwd,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let timedOut = false;
    let isFinished = false;
    child.stdout.on('data', run.keep);
    child.stderr.on('data', run.keep);
    const timer = setTimeout(() => {
      timedOut = true;
      if (child.pid) void killProcessGroup(child.pid);
    }, timeoutMs);
    const finish = (exitCode: number | null, note = '') => {
      if (isFinished) return;
      isFinished = true;
      clearTimeout(timer);
      release();
      resolve(run.facts(exitCode, note, timedOut));
    };
    child.on('error', (error) => finish(null, `\n[could not start: ${error.message}]`));
    child.on('close', (code, signal) =>
      finish(code, timedOut ? killedAfter(timeoutMs) : signal ? `\n[killed by ${signal}]` : ''),
    );
  });
}

/** The same on the task's runner, in its checkout there (the files synced first). */
async function runTestsOnRunner(
  command: string,
  remote: RemoteTask,
  timeoutMs: number,
): Promise<VerificationFacts> {
  const run = collectFacts(command);
  let outcome;
  try {
    outcome = await runRemoteCommand(remote, command, { timeoutMs, onOutput: run.keep });
  } catch (error) {
    // A runner gone or refusing ends the task; anything else is this run's failure.
    if (error instanceof TaskError) throw error;
    return run.facts(
      null,
      `[could not run on runner ${remote.runner.name}: ${errorMessage(error)}]`,
    );
  }
  const timedOut = outcome.ending === 'timed-out';
  const note = timedOut
    ? killedAfter(timeoutMs)
    : outcome.ending !== 'dropped'
      ? ''
      : outcome.exitCode === null
        ? '\n[the connection to the runner dropped; the command was stopped]'
        : '\n[the connection to the runner dropped after the command ended; its output may be cut]';
  return run.facts(outcome.exitCode, note, timedOut);
}

/** One run's facts: its output kept to the tail (`keep` takes each chunk), its time from now. */
function collectFacts(command: string) {
  const started = Date.now();
  let output = '';
  return {
    keep: (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-TAIL_CHARS * 2);
    },
    facts: (exitCode: number | null, note = '', timedOut = false): VerificationFacts => ({
      command,
      exitCode,
      outputTail: (output + note).slice(-TAIL_CHARS),
      ms: Date.now() - started,
      ...(timedOut ? { timedOut } : {}),
    }),
  };
}

const killedAfter = (timeoutMs: number) => `\n[killed after ${Math.round(timeoutMs / 1000)} s]`;

/** A test command that cannot run at all (not found, not executable) is a broken runner. */
export function isBrokenRunner(facts: VerificationFacts): boolean {
  return facts.exitCode === null || facts.exitCode === 126 || facts.exitCode === 127;
}

/**
 * What a test command lacks to run at all, read from its run before the work (undefined when
 * it ran: passing or failing tests are both runs). The class is the toolchain, never the tests:
 * a command or interpreter that is not there or not executable, a package manager or build tool
 * with no manifest, script or target to run. A test file that does not exist yet is not in it
 * (the task may be to write it), nor a command missing deeper down that exits otherwise (the
 * code under test may be what runs it).
 */
export function cannotRun(facts: VerificationFacts): string | undefined {
  const { exitCode, outputTail: output } = facts;
  if (exitCode === 0) return undefined;
  if (exitCode === null) return facts.timedOut ? undefined : 'it could not start';
  const table = exitCode === 126 || exitCode === 127 ? [...SHELL, ...TOOLCHAINS] : TOOLCHAINS;
  for (const [pattern, why] of table) {
    const match = pattern.exec(output);
    if (match) return why(match);
  }
  if (exitCode === 127) return 'a command it runs is not installed or not on PATH';
  if (exitCode === 126) return 'a command it runs is not executable';
  return undefined;
}

const quoted = (name: string | undefined) => `\`${name ?? '?'}\``;

type Missing = Array<[RegExp, (match: RegExpExecArray) => string]>;

/** The shell's own words when the command it was given cannot start (exit 126 or 127). */
const SHELL: Missing = [
  // `bash: line 1: jest: command not found`, `sh: 1: jest: not found`.
  [
    /^\S*sh: (?:line )?\d+: ([^:\n]+): (?:command )?not found$/m,
    (m) => `${quoted(m[1])} is not installed or not on PATH`,
  ],
  [
    /^\S*sh: (?:line \d+: )?([^:\n]+): Permission denied$/m,
    (m) => `${quoted(m[1])} is not executable`,
  ],
  [
    /^\S*sh: (?:line \d+: )?([^:\n]+): No such file or directory$/m,
    (m) => `${quoted(m[1])} does not exist`,
  ],
];

/** A package manager or build tool with no manifest, script or target to run. */
const TOOLCHAINS: Missing = [
  [
    /^npm (?:error|ERR!) enoent Could not read package\.json\b[^\n]*?open '([^']+)'/m,
    (m) => `there is no ${m[1]}`,
  ],
  [
    /^npm (?:error|ERR!) Missing script: "([^"]+)"/m,
    (m) => `package.json has no ${quoted(m[1])} script`,
  ],
  [
    /ERR_PNPM_NO_IMPORTER_MANIFEST_FOUND|^error Couldn't find a package\.json file/m,
    () => 'there is no package.json',
  ],
  [
    /ERR_PNPM_NO_SCRIPT\b.*?Missing script: (\S+)|^error Command "([^"]+)" not found/m,
    (m) => `package.json has no ${quoted(m[1] ?? m[2])} script`,
  ],
  [
    /^make: \*\*\* No rule to make target '([^']+)'/m,
    (m) => `make finds no target ${quoted(m[1])} (no Makefile, or none with that target)`,
  ],
  [/^make: \*\*\* No targets specified and no makefile found/m, () => 'there is no Makefile'],
  [/^error: could not find `Cargo\.toml`/m, () => 'there is no Cargo.toml'],
  [
    /^\S*python[\d.]*: No module named ([\w.]+)$/m,
    (m) => `the Python module ${quoted(m[1])} is not installed`,
  ],
];
