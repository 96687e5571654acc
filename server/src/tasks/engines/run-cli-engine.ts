import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { prepareCommand, type SandboxPolicy } from '../../sandbox/index.ts';
import { killProcessGroup } from '../../sandbox/kill-process-group.ts';
import { shellQuote } from '../../util/shell-quote.ts';
import type { CliEngine, CliEvent, CliFailure, CliInvocation } from './cli-engine.ts';

const STDERR_TAIL_BYTES = 2_000;

export interface CliRunOptions {
  engine: CliEngine;
  binary: string;
  invocation: CliInvocation;
  cwd: string;
  /** The task's clean environment (no keys), to which the invocation's variables are added. */
  baseEnv: Record<string, string>;
  /** The OS sandbox the CLI and everything it starts run in, when the task has one. */
  sandbox?: SandboxPolicy;
  /**
   * Cuts keys out of what the CLI prints (it holds the endpoint's key, and a model or endpoint
   * may echo it): every stdout line before it is parsed, the stderr tail before it is cut.
   */
  redact?: (text: string) => string;
  /** Kill the whole tree when the CLI prints nothing for this long. */
  idleTimeoutMs: number;
  signal: AbortSignal;
  onEvent(event: CliEvent): void;
  /** The CLI's process group, while it runs (recorded so a cancel from another process kills it). */
  onProcessGroup(pgid: number, isRunning: boolean): void;
}

export interface CliRunOutcome {
  exitCode: number | null;
  finalText: string;
  failure?: CliFailure;
  /** The CLI went silent past the idle timeout and was killed. */
  isIdleTimeout: boolean;
  stderrTail: string;
}

/**
 * Runs a CLI in its own process group in the task's directory (inside the task's OS sandbox
 * when it has one), feeding each JSON line of its stdout to the engine's parser. Idle timeout
 * and abort kill the whole group (TERM, then KILL); in the sandbox, bubblewrap's death ends
 * its PID namespace and everything the CLI started there.
 */
export async function runCliEngine(options: CliRunOptions): Promise<CliRunOutcome> {
  const env: Record<string, string> = { ...options.baseEnv, ...options.invocation.env };
  for (const name of options.invocation.unset) {
    if (!(name in options.invocation.env)) delete env[name];
  }
  const prepared = await prepareCommand(cliCommand(options), options.sandbox, env);
  try {
    return await spawnCli(options, prepared.script, env);
  } finally {
    prepared.release();
  }
}

/**
 * The CLI as a `bash -c` command. In the sandbox, loopback is in the NO_PROXY the runtime
 * sets, and a client honouring it would try a direct connection that the sandbox's empty
 * network namespace cannot make: an endpoint on 127.0.0.1 is reached through the proxy too.
 */
function cliCommand(options: CliRunOptions): string {
  const words = [options.binary, ...options.invocation.args].map(shellQuote).join(' ');
  return `${options.sandbox ? 'unset NO_PROXY no_proxy; ' : ''}exec ${words}`;
}

function spawnCli(
  options: CliRunOptions,
  script: string,
  env: Record<string, string>,
): Promise<CliRunOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], {
      cwd: options.cwd,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const pgid = child.pid;
    let finalText = '';
    let failure: CliFailure | undefined;
    let isIdleTimeout = false;
    let stderrTail = '';
    let idleTimer: NodeJS.Timeout | undefined;
    const stopGroup = () => {
      if (pgid !== undefined) void killProcessGroup(pgid);
    };
    const armIdle = () => {
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => {
        isIdleTimeout = true;
        stopGroup();
      }, options.idleTimeoutMs);
    };
    const onAbort = () => stopGroup();
    options.signal.addEventListener('abort', onAbort, { once: true });
    if (pgid !== undefined) options.onProcessGroup(pgid, true);
    armIdle();
    const parse = options.engine.createParser();
    const redact = options.redact ?? ((text: string) => text);
    createInterface({ input: child.stdout }).on('line', (line) => {
      armIdle();
      for (const event of parse(redact(line))) {
        if (event.finalText !== undefined) finalText = event.finalText;
        if (event.failure && !failure) failure = event.failure;
        if (event.isFatal) stopGroup();
        options.onEvent(event);
      }
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      armIdle();
      // Twice the tail is kept raw, and cut only after redaction: no key is cut in half first.
      stderrTail = (stderrTail + chunk).slice(-2 * STDERR_TAIL_BYTES);
    });
    child.on('error', (error) => {
      clearTimeout(idleTimer);
      options.signal.removeEventListener('abort', onAbort);
      reject(error);
    });
    child.on('close', (exitCode) => {
      clearTimeout(idleTimer);
      options.signal.removeEventListener('abort', onAbort);
      // Anything the CLI left behind in its group goes with it.
      stopGroup();
      if (pgid !== undefined) options.onProcessGroup(pgid, false);
      resolve({
        exitCode,
        finalText,
        ...(failure ? { failure } : {}),
        isIdleTimeout,
        stderrTail: redact(stderrTail).slice(-STDERR_TAIL_BYTES).trim(),
      });
    });
  });
}
