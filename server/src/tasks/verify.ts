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
  const started = Date.now();
  if (remote) return runTestsOnRunner(command, remote, timeoutMs);
  let script: string;
  let release: () => void;
  try {
    ({ script, release } = await prepareCommand(command, sandbox, env));
  } catch (error) {
    const note = `[could not set up the OS sandbox: ${errorMessage(error)}]`;
    return { command, exitCode: null, outputTail: note, ms: Date.now() - started };
  }
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], {
      cwd,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let timedOut = false;
    let isFinished = false;
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-TAIL_CHARS * 2);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => {
      timedOut = true;
      if (child.pid) void killProcessGroup(child.pid);
    }, timeoutMs);
    const finish = (exitCode: number | null, note = '') => {
      if (isFinished) return;
      isFinished = true;
      clearTimeout(timer);
      release();
      resolve({
        command,
        exitCode,
        outputTail: (output + note).slice(-TAIL_CHARS),
        ms: Date.now() - started,
        ...(timedOut ? { timedOut } : {}),
      });
    };
    child.on('error', (error) => finish(null, `\n[could not start: ${error.message}]`));
    child.on('close', (code, signal) =>
      finish(
        code,
        timedOut
          ? `\n[killed after ${Math.round(timeoutMs / 1000)} s]`
          : signal
            ? `\n[killed by ${signal}]`
            : '',
      ),
    );
  });
}

/** The same on the task's runner, in its checkout there (the files synced first). */
async function runTestsOnRunner(
  command: string,
  remote: RemoteTask,
  timeoutMs: number,
): Promise<VerificationFacts> {
  const started = Date.now();
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-TAIL_CHARS * 2);
  };
  let outcome;
  try {
    outcome = await runRemoteCommand(remote, command, { timeoutMs, onOutput: keep });
  } catch (error) {
    // A runner gone or refusing ends the task; anything else is this run's failure.
    if (error instanceof TaskError) throw error;
    const note = `[could not run on runner ${remote.runner.name}: ${errorMessage(error)}]`;
    return { command, exitCode: null, outputTail: note, ms: Date.now() - started };
  }
  const timedOut = outcome.ending === 'timed-out';
  const note = timedOut
    ? `\n[killed after ${Math.round(timeoutMs / 1000)} s]`
    : outcome.ending === 'dropped'
      ? '\n[the connection to the runner dropped; the command was stopped]'
      : '';
  return {
    command,
    exitCode: outcome.exitCode,
    outputTail: (output + note).slice(-TAIL_CHARS),
    ms: Date.now() - started,
    ...(timedOut ? { timedOut } : {}),
  };
}

/** A test command that cannot run at all (not found, not executable) is a broken runner. */
export function isBrokenRunner(facts: VerificationFacts): boolean {
  return facts.exitCode === null || facts.exitCode === 126 || facts.exitCode === 127;
}
