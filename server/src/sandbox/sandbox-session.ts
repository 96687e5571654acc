import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import type { SandboxManager, SandboxRuntimeConfig } from '@anthropic-ai/sandbox-runtime';
import type { Environment } from '../config/paths.ts';

export type Manager = typeof SandboxManager;

/** Tests point this at a missing file to make bubblewrap unavailable without touching PATH. */
export const BWRAP_PATH_VARIABLE = 'DELEGATE_BWRAP_PATH_FOR_TEST';
const PROBE_TIMEOUT_MS = 15_000;
const SIGNALS = ['SIGTERM', 'SIGINT'] as const;

/**
 * The library is one sandbox session per process (its proxies, its mount bookkeeping live in
 * module state), so starting it, and probing it, is remembered per process as well. A failure
 * is forgotten: the next task tries again, e.g. once bubblewrap is installed.
 */
const session: { ready?: Promise<Manager>; probed?: Promise<void> } = {};

/** The process's sandbox session, started on first use (proxies up, dependencies checked). */
export function startSession(env: Environment): Promise<Manager> {
  session.ready ??= openSession(env).catch((error: unknown) => {
    session.ready = undefined;
    throw error;
  });
  return session.ready;
}

/**
 * Dependencies can be present and still unusable (no user namespaces in a container, root
 * without CAP_SETFCAP): runs one command in the sandbox, once per process.
 */
export function probeSession(manager: Manager): Promise<void> {
  session.probed ??= probe(manager).catch((error: unknown) => {
    session.probed = undefined;
    throw error;
  });
  return session.probed;
}

let leases = 0;

/**
 * Runs `action` with the session kept open for it; the last lease out closes the session. For
 * a process that only needs the sandbox now and then (the server checks it and runs the
 * preflight at task_start): an open session's socat bridges would outlive that process.
 */
export async function withSessionLease<T>(action: () => Promise<T>): Promise<T> {
  leases += 1;
  try {
    return await action();
  } finally {
    leases -= 1;
    if (leases === 0) await closeSession();
  }
}

/** Stops the session (its proxies and socat bridges would keep the process alive). */
export async function closeSession(): Promise<void> {
  const ready = session.ready;
  session.ready = undefined;
  session.probed = undefined;
  const manager = await ready?.catch(() => undefined);
  await manager?.reset();
}

async function openSession(env: Environment): Promise<Manager> {
  const { SandboxManager } = await import('@anthropic-ai/sandbox-runtime');
  if (!SandboxManager.isSupportedPlatform()) {
    throw new Error(`the OS sandbox does not support ${process.platform}`);
  }
  const bwrapPath = env[BWRAP_PATH_VARIABLE]?.trim();
  const config: SandboxRuntimeConfig = {
    network: { allowedDomains: [], deniedDomains: [] },
    filesystem: { denyRead: [], allowWrite: [], denyWrite: [] },
    ...(bwrapPath ? { bwrapPath } : {}),
  };
  const before = new Map(SIGNALS.map((signal) => [signal, process.listeners(signal)]));
  try {
    await SandboxManager.initialize(config);
  } catch (error) {
    await SandboxManager.reset().catch(() => undefined);
    throw error;
  } finally {
    restoreSignals(before);
  }
  return SandboxManager;
}

/**
 * The library answers SIGTERM and SIGINT with its clean-up and nothing else, which would leave
 * a cancelled worker running until SIGKILL. Its listeners are taken off again; where nobody
 * else listens, the signal ends the process (its 'exit' clean-up still runs).
 */
function restoreSignals(before: Map<(typeof SIGNALS)[number], unknown[]>): void {
  for (const signal of SIGNALS) {
    const earlier = before.get(signal) ?? [];
    for (const listener of process.listeners(signal)) {
      if (!earlier.includes(listener)) process.removeListener(signal, listener);
    }
    if (process.listenerCount(signal) === 0) {
      process.once(signal, () => process.exit(128 + constants.signals[signal]));
    }
  }
}

async function probe(manager: Manager): Promise<void> {
  const script = await manager.wrapWithSandbox('true', 'bash', {
    filesystem: { denyRead: [], allowWrite: [], denyWrite: [] },
  });
  try {
    const { code, output } = await runQuietly(script);
    if (code !== 0) {
      throw new Error(
        `a probe command failed in the sandbox (exit ${code ?? 'none'}): ${output.trim().slice(-300)}`,
      );
    }
  } finally {
    manager.cleanupAfterCommand();
  }
}

function runQuietly(script: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], { cwd: '/', stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-2_000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => child.kill('SIGKILL'), PROBE_TIMEOUT_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve({ code: null, output: error.message });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}
