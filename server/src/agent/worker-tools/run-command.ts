import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { errorMessage, UserError } from '../../util/user-error.ts';
import { prepareCommand, type PreparedCommand } from '../../sandbox/os-sandbox.ts';
import { isProcessGroupAlive, killProcessGroup } from '../../sandbox/kill-process-group.ts';
import { createOutputCapture, type OutputCapture } from './output-capture.ts';
import { runRemoteCommand, type RemoteTask } from '../../runners/remote-shell.ts';
import type { WorkerToolContext } from './types.ts';

/** Combined stdout and stderr kept per call: head and tail, the middle cut. */
const MAX_OUTPUT_BYTES = 30 * 1024;
/** A process that left the group (setsid) may hold the pipes open; we stop waiting. */
const CLOSE_WAIT_MS = 1_000;

export type CommandEnding = 'exited' | 'timed-out' | 'aborted' | 'dropped';

export interface CommandOutcome {
  output: string;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  ending: CommandEnding;
  /** Processes of the group still ran when bash ended, and were killed. */
  hadLeftovers: boolean;
  /** On a runner: the files the command changed (brought back to the task directory). */
  filesChanged?: string[];
}

interface StartedBash {
  pgid: number;
  output: OutputCapture;
  exited: Promise<[number | null, NodeJS.Signals | null]>;
  /** Ends the pipes once bash and everything holding them are gone, or after CLOSE_WAIT_MS. */
  drain: () => Promise<void>;
}

/**
 * Runs `bash -c command` in its own process group with stdin closed (inside the OS sandbox
 * when the context has one). On timeout or abort, and after bash ends, the whole group is
 * killed, so nothing it started outlives the call; in the sandbox, bubblewrap's death ends
 * its PID namespace, and with it everything the command started there.
 */
export async function runCommand(
  command: string,
  context: WorkerToolContext,
  timeoutMs: number,
): Promise<CommandOutcome> {
  const { signal } = context;
  if (signal?.aborted) throw new UserError('Cancelled before the command started.');
  if (context.remote) return runOnRunner(command, context.remote, context, timeoutMs);
  const prepared = await prepare(`exec 2>&1; ${command}`, context);
  let started: StartedBash;
  try {
    started = await startBash(prepared.script, context);
  } catch (error) {
    prepared.release();
    throw error;
  }
  const { pgid, output, exited, drain } = started;
  context.onChildProcess?.(pgid, true);
  const state: { ending: CommandEnding } = { ending: 'exited' };
  const stop = (ending: CommandEnding) => {
    state.ending = ending;
    void killProcessGroup(pgid);
  };
  const timer = setTimeout(() => stop('timed-out'), timeoutMs);
  const onAbort = () => stop('aborted');
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const [exitCode, exitSignal] = await exited;
    const hadLeftovers = state.ending === 'exited' && isProcessGroupAlive(pgid);
    await killProcessGroup(pgid);
    await drain();
    const text = output.text();
    return { output: text, exitCode, signal: exitSignal, ending: state.ending, hadLeftovers };
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    prepared.release();
    context.onChildProcess?.(pgid, false);
  }
}

/** The same on the task's runner: the files go there first and come back after. */
async function runOnRunner(
  command: string,
  remote: RemoteTask,
  context: WorkerToolContext,
  timeoutMs: number,
): Promise<CommandOutcome> {
  const output = createOutputCapture(MAX_OUTPUT_BYTES);
  let pgid: number | undefined;
  try {
    const outcome = await runRemoteCommand(remote, command, {
      timeoutMs,
      ...(context.signal ? { signal: context.signal } : {}),
      onOutput: (chunk) => output.push(chunk),
      onStart: (started) => {
        pgid = started;
        context.onChildProcess?.(started, true);
      },
    });
    return {
      output: output.text(),
      exitCode: outcome.exitCode,
      signal: null,
      ending: outcome.ending,
      hadLeftovers: outcome.hadLeftovers,
      filesChanged: outcome.filesChanged,
    };
  } finally {
    if (pgid !== undefined) context.onChildProcess?.(pgid, false);
  }
}

async function prepare(command: string, context: WorkerToolContext): Promise<PreparedCommand> {
  try {
    return await prepareCommand(command, context.sandbox, context.env);
  } catch (error) {
    throw new UserError(
      `run_bash could not set up the OS sandbox: ${errorMessage(error)}. Nothing ran.`,
    );
  }
}

async function startBash(script: string, context: WorkerToolContext): Promise<StartedBash> {
  // One stream for both (the script starts with `exec 2>&1`), so their lines keep their order;
  // a parse error, or the sandbox's own complaint, still reaches stderr.
  const child = spawn('bash', ['-c', script], {
    cwd: context.root,
    env: context.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const output = createOutputCapture(MAX_OUTPUT_BYTES);
  child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => output.push(chunk));
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.once('exit', (code, exitSignal) => resolve([code, exitSignal])),
  );
  const spawnError = await new Promise<Error | undefined>((resolve) => {
    child.once('spawn', () => resolve(undefined));
    child.once('error', resolve);
  });
  if (spawnError || child.pid === undefined) {
    throw new UserError(
      `run_bash could not start bash in ${context.root}: ${spawnError?.message ?? 'no process id'}`,
    );
  }
  const drain = async () => {
    await Promise.race([closed, sleep(CLOSE_WAIT_MS)]);
    child.stdout.destroy();
    child.stderr.destroy();
  };
  return { pgid: child.pid, output, exited, drain };
}
