import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scaledMs } from './timing.ts';

/**
 * A real OpenSSH server on 127.0.0.1 for the SSH runner tests: its own host key, client key,
 * known_hosts and config in a temp dir (never the real ~/.ssh), logging in as the dedicated
 * account `delegate-runner` when we are root and it exists (see scripts/install-test-deps.sh),
 * else as the current user.
 */

/** The dedicated account scripts/install-test-deps.sh creates. */
export const RUNNER_USER = 'delegate-runner';
const SSHD = '/usr/sbin/sshd';

export interface SshResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface SshdFixture {
  host: '127.0.0.1';
  port: number;
  /** `delegate-runner` when we are root and it exists, else the current user. */
  user: string;
  /** The client private key (ed25519, no passphrase, mode 0600). */
  identityFile: string;
  /** Holds `[127.0.0.1]:PORT ssh-ed25519 ...` for the host key. */
  knownHostsFile: string;
  /** `SHA256:...` as `ssh-keygen -lf` prints it. */
  hostKeyFingerprint: string;
  /** An empty directory the runner user owns and can write (absolute, short, under /tmp). */
  workdir: string;
  separateUser: boolean;
  /** The ssh client arguments up to and including `user@127.0.0.1` (append the command). */
  sshArgs: string[];
  /** Runs a shell command as the runner user on the runner via ssh (BatchMode, the fixture's keys). */
  exec(command: string): Promise<SshResult>;
  /**
   * `pid args` of every live process of this runner that is not sshd itself (what descends from
   * its sshd, and what the runner user runs inside its workdir): for asserting "no process left
   * on the runner", without seeing another test's runner on the same account.
   */
  runnerProcesses(): string[];
  /** Kills this runner's processes (see runnerProcesses), sshd and its per-connection children; removes the temp dirs. Idempotent. */
  stop(): Promise<void>;
  /** Kills sshd and its connection children only (the runner disappearing); keeps the files. */
  kill(): Promise<void>;
  /**
   * Drops every open connection (SIGKILLs sshd's per-connection processes), as a network that
   * goes away would: sshd keeps listening, and what the sessions ran keeps running. Returns how
   * many processes it killed.
   */
  dropConnections(): number;
}

interface ProcessFacts {
  pid: number;
  ppid: number;
  uid: number;
  commandLine: string;
}

/** Live (non-zombie) processes, from /proc. */
function processes(): ProcessFacts[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((entry) => {
      try {
        const status = readFileSync(`/proc/${entry}/status`, 'utf8');
        const field = (name: string) => new RegExp(`^${name}:\\s*(\\S+)`, 'm').exec(status)?.[1];
        if (field('State') === 'Z') return [];
        const commandLine = readFileSync(`/proc/${entry}/cmdline`, 'utf8')
          .replace(/\0+$/, '')
          .replace(/\0/g, ' ');
        return [
          {
            pid: Number(entry),
            ppid: Number(field('PPid')),
            uid: Number(field('Uid')),
            commandLine,
          },
        ];
      } catch {
        return [];
      }
    });
}

/** `root` and every live process descending from it. */
function descendants(root: number): ProcessFacts[] {
  const all = processes();
  const found = new Set([root]);
  for (let grew = true; grew;) {
    grew = false;
    for (const facts of all) {
      if (!found.has(facts.pid) && found.has(facts.ppid)) {
        found.add(facts.pid);
        grew = true;
      }
    }
  }
  return all.filter((facts) => found.has(facts.pid));
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A port that was free a moment ago on 127.0.0.1. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('no port'))));
    });
  });
}

/** The environment for the ssh client: no agent. */
function clientEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.SSH_AUTH_SOCK;
  return env;
}

/** Runs ssh with `args`, never reading stdin; killed after `timeoutMs` (scaled). */
export function runSsh(args: string[], timeoutMs = 60_000): Promise<SshResult> {
  return new Promise((resolve) => {
    execFile(
      'ssh',
      args,
      {
        env: clientEnv(),
        timeout: scaledMs(timeoutMs),
        killSignal: 'SIGKILL',
        maxBuffer: 64 << 20,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, stdout, stderr });
      },
    ).stdin?.end();
  });
}

function runnerAccount(): { user: string; uid: number; gid: number; separateUser: boolean } {
  if (process.getuid?.() === 0) {
    try {
      const uid = Number(
        execFileSync('id', ['-u', RUNNER_USER], {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'ignore'],
        }).trim(),
      );
      const gid = Number(
        execFileSync('id', ['-g', RUNNER_USER], {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'ignore'],
        }).trim(),
      );
      return { user: RUNNER_USER, uid, gid, separateUser: true };
    } catch {
      // No such account: log in as root.
    }
  }
  const user = execFileSync('id', ['-un'], { encoding: 'utf8' }).trim();
  return {
    user,
    uid: process.getuid?.() ?? -1,
    gid: process.getgid?.() ?? -1,
    separateUser: false,
  };
}

/** `runners.<name>` of a config for this sshd, with `overrides`. */
export function runnerConfig(sshd: SshdFixture, overrides: Record<string, unknown> = {}) {
  return {
    type: 'ssh',
    host: sshd.host,
    port: sshd.port,
    user: sshd.user,
    identityFile: sshd.identityFile,
    knownHostsFile: sshd.knownHostsFile,
    workdir: sshd.workdir,
    ...overrides,
  };
}

/** Starts sshd on a free 127.0.0.1 port and waits until a login works. */
export async function startSshd(): Promise<SshdFixture> {
  const account = runnerAccount();
  const root = process.getuid?.() === 0;
  if (root) mkdirSync('/run/sshd', { recursive: true, mode: 0o755 }); // privilege separation dir

  // Keys and config. The dir is 0755 so the runner user can read authorized_keys (sshd reads it
  // as that user); the private keys stay 0600.
  const keysDir = mkdtempSync(join(tmpdir(), 'delegate-sshd-'));
  chmodSync(keysDir, 0o755);
  const hostKey = join(keysDir, 'host_ed25519');
  const identityFile = join(keysDir, 'client_ed25519');
  for (const file of [hostKey, identityFile]) {
    execFileSync(
      'ssh-keygen',
      ['-q', '-t', 'ed25519', '-N', '', '-C', 'delegate-test', '-f', file],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    chmodSync(file, 0o600);
  }
  const authorizedKeys = join(keysDir, 'authorized_keys');
  writeFileSync(authorizedKeys, readFileSync(`${identityFile}.pub`, 'utf8'), { mode: 0o644 });
  chmodSync(authorizedKeys, 0o644);
  const [keyType, keyBody] = readFileSync(`${hostKey}.pub`, 'utf8').trim().split(/\s+/);
  const hostKeyFingerprint =
    execFileSync('ssh-keygen', ['-lf', `${hostKey}.pub`], { encoding: 'utf8' })
      .trim()
      .split(/\s+/)[1] ?? '';
  const knownHostsFile = join(keysDir, 'known_hosts');
  const pidFile = join(keysDir, 'sshd.pid');
  const config = join(keysDir, 'sshd_config');

  const workdir = mkdtempSync('/tmp/dr-');
  chmodSync(workdir, 0o755);
  if (account.separateUser) chownSync(workdir, account.uid, account.gid);

  let sshd: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let port: number;
  let sshArgs: string[] = [];
  let stderr = '';
  const removeFiles = () => {
    rmSync(keysDir, { recursive: true, force: true });
    rmSync(workdir, { recursive: true, force: true });
  };

  /** SIGKILLs sshd and everything below it (per-connection children run in their own sessions). */
  const killSshd = async () => {
    const pid = sshd?.pid;
    if (!pid || sshd?.exitCode !== null || sshd.signalCode !== null) return;
    signal(pid, 'SIGSTOP'); // no new connections while we collect its children
    for (let round = 0; round < 5; round++) {
      const tree = descendants(pid).filter((facts) => facts.pid !== pid);
      if (tree.length === 0) break;
      for (const facts of tree) signal(facts.pid, 'SIGKILL');
      await sleep(20);
    }
    signal(-pid, 'SIGKILL');
    signal(pid, 'SIGKILL');
    await exited;
  };

  try {
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      writeFileSync(knownHostsFile, `[127.0.0.1]:${port} ${keyType} ${keyBody}\n`, { mode: 0o644 });
      writeFileSync(
        config,
        [
          `Port ${port}`,
          'ListenAddress 127.0.0.1',
          `HostKey ${hostKey}`,
          `PidFile ${pidFile}`,
          `AuthorizedKeysFile ${authorizedKeys}`,
          'StrictModes no',
          'UsePAM no',
          'PasswordAuthentication no',
          'KbdInteractiveAuthentication no',
          'PermitRootLogin prohibit-password',
          `AllowUsers ${account.user}`,
          'AllowAgentForwarding no',
          'X11Forwarding no',
          'PrintMotd no',
          'MaxSessions 50',
          'MaxStartups 50',
          '',
        ].join('\n'),
      );
      sshArgs = [
        '-F',
        'none',
        '-o',
        'BatchMode=yes',
        '-o',
        'StrictHostKeyChecking=yes',
        '-o',
        `UserKnownHostsFile=${knownHostsFile}`,
        '-o',
        'IdentitiesOnly=yes',
        '-i',
        identityFile,
        '-p',
        String(port),
        `${account.user}@127.0.0.1`,
      ];
      stderr = '';
      const child = spawn(SSHD, ['-D', '-e', '-f', config], {
        detached: true,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      sshd = child;
      child.stderr?.setEncoding('utf8');
      child.stderr?.on('data', (chunk: string) => {
        if (stderr.length < 1 << 20) stderr += chunk;
      });
      exited = new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) resolve();
        else child.once('close', () => resolve());
      });
      child.once('error', (error) => {
        stderr += `\nspawn ${SSHD}: ${error.message}`;
      });

      const deadline = Date.now() + scaledMs(10_000);
      let ready = false;
      let last: SshResult | undefined;
      while (Date.now() < deadline) {
        if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) break;
        // A refusal that waiting will not cure (e.g. a locked account: see install-test-deps.sh).
        if (/not allowed because|Authentication refused/.test(stderr)) break;
        last = await runSsh([...sshArgs, 'true'], 10_000);
        if (last.code === 0) {
          ready = true;
          break;
        }
        await sleep(100);
      }
      if (ready) break;
      await killSshd();
      await exited;
      const bindFailed = /Address already in use|Cannot bind any address/.test(stderr);
      if (bindFailed && attempt < 5) continue;
      throw new Error(
        `sshd on 127.0.0.1:${port} did not accept a login (attempt ${attempt}); ` +
          `sshd exit ${child.exitCode ?? child.signalCode}; sshd stderr:\n${stderr}\n` +
          `last ssh stderr:\n${last?.stderr ?? '(none)'}`,
      );
    }
  } catch (error) {
    removeFiles();
    throw error;
  }

  /**
   * Processes of this runner (not another test's sshd on the same account): what descends from
   * this sshd, and what the runner user runs with its working directory in this workdir (a
   * command whose shell exited is no descendant any more).
   */
  const ownProcesses = (): ProcessFacts[] => {
    const pid = sshd?.pid;
    const below = new Set(pid ? descendants(pid).map((facts) => facts.pid) : []);
    const inWorkdir = (facts: ProcessFacts) => {
      try {
        const cwd = readlinkSync(`/proc/${facts.pid}/cwd`);
        return cwd === workdir || cwd.startsWith(`${workdir}/`);
      } catch {
        return false;
      }
    };
    return processes().filter(
      (facts) =>
        facts.pid !== pid &&
        (below.has(facts.pid) || (facts.uid === account.uid && inWorkdir(facts))),
    );
  };

  const runnerProcesses = (): string[] =>
    ownProcesses()
      .filter((facts) => !/^sshd(-session)?(:|\s|$)/.test(facts.commandLine))
      .map((facts) => `${facts.pid} ${facts.commandLine}`);

  /** SIGKILLs this runner's processes until none is left (they may fork meanwhile). */
  const killRunnerProcesses = async () => {
    const deadline = Date.now() + scaledMs(5_000);
    for (;;) {
      const left = ownProcesses();
      if (left.length === 0) return;
      if (Date.now() > deadline) {
        throw new Error(
          `processes of ${account.user} survived SIGKILL: ${left.map((f) => `${f.pid} ${f.commandLine}`).join('; ')}`,
        );
      }
      for (const facts of left) signal(facts.pid, 'SIGKILL');
      await sleep(20);
    }
  };

  const dropConnections = (): number => {
    const pid = sshd?.pid;
    if (!pid) return 0;
    const sessions = descendants(pid).filter(
      (facts) => facts.pid !== pid && /^sshd(-session)?(:|\s|$)/.test(facts.commandLine),
    );
    for (const facts of sessions) signal(facts.pid, 'SIGKILL');
    return sessions.length;
  };

  let stopping: Promise<void> | undefined;
  return {
    host: '127.0.0.1',
    port,
    user: account.user,
    identityFile,
    knownHostsFile,
    hostKeyFingerprint,
    workdir,
    separateUser: account.separateUser,
    sshArgs,
    exec: (command) => runSsh([...sshArgs, command]),
    runnerProcesses,
    kill: killSshd,
    dropConnections,
    stop: () =>
      (stopping ??= (async () => {
        try {
          await killRunnerProcesses();
          await killSshd();
        } finally {
          removeFiles();
        }
      })()),
  };
}
