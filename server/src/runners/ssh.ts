/**
 * One way to reach a runner: the system's `ssh`, with every option on the command line (no
 * ~/.ssh/config, which could name a ProxyCommand or forward the agent), strict host-key
 * checking always, and one multiplexed connection per runner shared by every process of the
 * user (ControlMaster), so a task's many commands pay for one handshake.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { shellQuote } from '../util/shell-quote.ts';
import { UserError } from '../util/user-error.ts';
import type { RecordedRunner } from '../store/job-file.ts';

/** Where a runner is and how to log in: `runners.<name>` of the user's config, with its name. */
export type RunnerAddress = Pick<
  RecordedRunner,
  'name' | 'host' | 'port' | 'user' | 'identityFile' | 'knownHostsFile' | 'workdir'
>;

export interface SshResult {
  /** ssh's exit status: the remote command's, or 255 when ssh itself failed. */
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

export interface SshOptions {
  /** Bytes written to the remote command's stdin (closed at once when absent). */
  input?: Buffer;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Each chunk of stdout as it arrives (stdout is then not kept). */
  onStdout?: (chunk: Buffer) => void;
  /** The ssh client's process group, once started. */
  onStart?: (pgid: number) => void;
}

/** Variables ssh gets: enough to find its keys and an agent; never the task's or a provider's. */
const PASSED_VARIABLES = ['PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'SSH_AUTH_SOCK'];
/** How long an idle shared connection stays open after its last command. */
const CONTROL_PERSIST_S = 60;
/** Unix socket paths are limited to about 104 bytes. */
const MAX_SOCKET_PATH = 100;

/** A path from the config: `~/` is the user's home. */
export function expandHome(path: string, home: string | undefined): string {
  return path.startsWith('~/') && home ? join(home, path.slice(2)) : path;
}

function controlPath(runner: RunnerAddress, dataHome: string): string {
  // Everything that decides whom ssh trusts and how it logs in: a runner must never ride on a
  // connection another runner's host key or identity opened.
  const key = createHash('sha256')
    .update(
      JSON.stringify([
        runner.user ?? '',
        runner.host,
        runner.port ?? 22,
        runner.identityFile ?? '',
        runner.knownHostsFile ?? '',
      ]),
    )
    .digest('hex')
    .slice(0, 16);
  const preferred = join(dataHome, 'ssh');
  const folder =
    join(preferred, key).length <= MAX_SOCKET_PATH
      ? preferred
      : join(tmpdir(), `delegate-ssh-${process.getuid?.() ?? 'user'}`);
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  return join(folder, key);
}

/** `ssh` arguments up to and including the destination; the remote command follows. */
export function sshArguments(
  runner: RunnerAddress,
  dataHome: string,
  env: Record<string, string | undefined>,
): string[] {
  const options: Record<string, string> = {
    BatchMode: 'yes',
    StrictHostKeyChecking: 'yes',
    UpdateHostKeys: 'no',
    ForwardAgent: 'no',
    ForwardX11: 'no',
    ClearAllForwardings: 'yes',
    PermitLocalCommand: 'no',
    ConnectTimeout: '10',
    ServerAliveInterval: '10',
    ServerAliveCountMax: '3',
    ControlMaster: 'auto',
    ControlPath: controlPath(runner, dataHome),
    ControlPersist: `${CONTROL_PERSIST_S}`,
    LogLevel: 'ERROR',
    ...(runner.knownHostsFile
      ? {
          UserKnownHostsFile: expandHome(runner.knownHostsFile, env.HOME),
          GlobalKnownHostsFile: '/dev/null',
        }
      : {}),
    ...(runner.identityFile ? { IdentitiesOnly: 'yes' } : {}),
  };
  return [
    '-F',
    'none',
    ...Object.entries(options).flatMap(([key, value]) => ['-o', `${key}=${value}`]),
    ...(runner.identityFile ? ['-i', expandHome(runner.identityFile, env.HOME)] : []),
    ...(runner.port ? ['-p', String(runner.port)] : []),
    ...(runner.user ? ['-l', runner.user] : []),
    '--',
    runner.host,
  ];
}

function sshEnvironment(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(
    PASSED_VARIABLES.flatMap((name) => (env[name] === undefined ? [] : [[name, env[name]]])),
  );
}

/**
 * Runs `script` with `sh -c` on the runner. Resolves with ssh's exit status and output; never
 * rejects for a failed command or connection (the caller reads `code` and `stderr`).
 */
export function runSsh(
  runner: RunnerAddress,
  script: string,
  context: { dataHome: string; env: Record<string, string | undefined> },
  options: SshOptions = {},
): Promise<SshResult> {
  const args = [
    ...sshArguments(runner, context.dataHome, context.env),
    `sh -c ${shellQuote(script)}`,
  ];
  return new Promise((resolve) => {
    const child = spawn('ssh', args, {
      env: sshEnvironment(context.env),
      stdio: [options.input ? 'pipe' : 'ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const stdout: Buffer[] = [];
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) =>
      options.onStdout ? options.onStdout(chunk) : stdout.push(chunk),
    );
    child.stderr?.on(
      'data',
      (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-8_000)),
    );
    if (options.input && child.stdin) {
      child.stdin.on('error', () => undefined);
      child.stdin.end(options.input);
    }
    const stop = () => {
      if (child.pid) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // Gone already.
        }
      }
    };
    const timer = options.timeoutMs ? setTimeout(stop, options.timeoutMs) : undefined;
    options.signal?.addEventListener('abort', stop, { once: true });
    child.once('spawn', () => child.pid && options.onStart?.(child.pid));
    let isDone = false;
    const finish = (code: number | null, note = '') => {
      if (isDone) return;
      isDone = true;
      if (timer) clearTimeout(timer);
      options.signal?.removeEventListener('abort', stop);
      resolve({ code, stdout: Buffer.concat(stdout), stderr: stderr + note });
    };
    child.once('error', (error) => finish(null, `could not run ssh: ${error.message}`));
    child.once('close', (code) => finish(code));
  });
}

/** Why ssh could not run a command on the runner, sorted by what the user can do about it. */
export type SshFailure = 'unknown-host-key' | 'changed-host-key' | 'auth' | 'connection';

/** The failure of an ssh call that exited 255 (or never ran), else undefined. */
export function sshFailure(result: SshResult): SshFailure | undefined {
  if (result.code !== 255 && result.code !== null) return undefined;
  const text = result.stderr;
  if (/REMOTE HOST IDENTIFICATION HAS CHANGED|host key for .* has changed/i.test(text)) {
    return 'changed-host-key';
  }
  if (/No \S+ host key is known|Host key verification failed/i.test(text)) {
    return 'unknown-host-key';
  }
  if (/Permission denied|Too many authentication failures/i.test(text)) return 'auth';
  return 'connection';
}

/** The runner's host-key fingerprints as ssh-keyscan and ssh-keygen print them, or [] when unreachable. */
async function hostKeyFingerprints(runner: RunnerAddress): Promise<string[]> {
  const scan = await runLocal('ssh-keyscan', [
    '-T',
    '5',
    ...(runner.port ? ['-p', String(runner.port)] : []),
    '--',
    runner.host,
  ]);
  if (!scan.trim()) return [];
  const listed = await runLocal('ssh-keygen', ['-l', '-f', '-'], scan);
  return listed
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const [, , fingerprint, , type] = /^(\d+) (\S+) (.*) \((\S+)\)$/.exec(line) ?? [];
      return fingerprint && type ? `${type} ${fingerprint}` : line;
    });
}

function runLocal(command: string, args: string[], input?: string): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'ignore'] });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stdin.on('error', () => undefined);
    child.stdin.end(input ?? '');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('error', () => resolve(''));
    child.once('close', () => {
      clearTimeout(timer);
      resolve(output);
    });
  });
}

/**
 * The known_hosts file ssh reads for this runner, as an absolute path: the configured one, else
 * what ssh itself resolves (`ssh -G`). Its `~` is the home of the user's passwd entry, not
 * `$HOME` (sudo, containers, CI): advice naming `~/.ssh/known_hosts` would send the user to a
 * file the runner check never reads.
 */
export async function knownHostsFileOf(
  runner: Pick<RunnerAddress, 'host' | 'port' | 'knownHostsFile'>,
  env: Record<string, string | undefined>,
): Promise<string> {
  if (runner.knownHostsFile) return expandHome(runner.knownHostsFile, env.HOME);
  const printed = await runLocal('ssh', [
    '-G',
    '-F',
    'none',
    ...(runner.port ? ['-p', String(runner.port)] : []),
    '--',
    runner.host,
  ]);
  const resolved = /^userknownhostsfile (\S+)/m.exec(printed)?.[1];
  return resolved && isAbsolute(resolved)
    ? resolved
    : join(userInfo().homedir, '.ssh', 'known_hosts');
}

/**
 * The error for a refused ssh call, saying what to do: a host key that is unknown or changed
 * (with the fingerprints the runner offers and how to trust them), a refused login, or a
 * runner that cannot be reached.
 */
export async function sshFailureError(
  runner: RunnerAddress,
  failure: SshFailure,
  result: SshResult,
  env: Record<string, string | undefined>,
): Promise<UserError> {
  const where = `${runner.host}${runner.port ? `:${runner.port}` : ''}`;
  const knownHosts = await knownHostsFileOf(runner, env);
  const scanHost = runner.port ? `-p ${runner.port} ${runner.host}` : runner.host;
  const detail = result.stderr.trim().split('\n').slice(-3).join(' ');
  if (failure === 'unknown-host-key' || failure === 'changed-host-key') {
    const offered = await hostKeyFingerprints(runner);
    const offers = offered.length
      ? `It offers: ${offered.join(', ')}.`
      : 'Its key could not be read (ssh-keyscan got no answer).';
    const trust =
      `Compare with the runner's own (on it: ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub); ` +
      `if it matches, trust it with: ssh-keyscan ${scanHost} >> ${knownHosts}`;
    if (failure === 'changed-host-key') {
      return new UserError(
        `Runner "${runner.name}": the host key of ${where} CHANGED since it was trusted in ${knownHosts}. ` +
          `This can be an attack; nothing ran. ${offers} If the runner was reinstalled, remove the old key ` +
          `(ssh-keygen -R ${shellQuote(runner.port ? `[${runner.host}]:${runner.port}` : runner.host)} -f ${knownHosts}), then: ${trust}.`,
      );
    }
    return new UserError(
      `Runner "${runner.name}": the host key of ${where} is not in ${knownHosts}, and runners use strict host-key ` +
        `checking; nothing ran. ${offers} ${trust}.`,
    );
  }
  if (failure === 'auth') {
    return new UserError(
      `Runner "${runner.name}": ${where} refused the login${runner.user ? ` of "${runner.user}"` : ''} (${detail}). ` +
        `Check "user" and "identityFile" in runners.${runner.name}, and that the key is in the runner's authorized_keys.`,
    );
  }
  return new UserError(
    `Runner "${runner.name}": cannot reach ${where} (${detail || 'ssh failed'}). Is it up, and is "host"/"port" right?`,
  );
}
