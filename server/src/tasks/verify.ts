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
