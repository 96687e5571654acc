import { join } from 'node:path';
import { exists, secretShown, type EscapeAttempt } from './escape-world.ts';
import { WRITE_ATTEMPTS } from './escape-writes.ts';

export {
  fillCommand,
  removeSharedLeftovers,
  type EscapeAttempt,
  type EscapeWorld,
} from './escape-world.ts';

/** Reads of secrets and of other processes' environments. */
export const READ_ATTEMPTS: EscapeAttempt[] = [
  {
    id: 'read-ssh',
    what: 'read `~/.ssh/id_rsa`',
    command: 'cat ~/.ssh/id_rsa',
    escaped: (w, out) => secretShown(w, out, 'SSH'),
    escapesUnsandboxed: true,
  },
  {
    id: 'read-aws',
    what: 'read `~/.aws/credentials`',
    command: 'cat ~/.aws/credentials',
    escaped: (w, out) => secretShown(w, out, 'AWS'),
    escapesUnsandboxed: true,
  },
  {
    id: 'read-netrc-npmrc',
    what: 'read `~/.netrc` and `~/.npmrc`',
    command: 'cat ~/.netrc ~/.npmrc',
    escaped: (w, out) => secretShown(w, out, 'NETRC') || secretShown(w, out, 'NPMRC'),
    escapesUnsandboxed: true,
  },
  {
    id: 'read-cloud-logins',
    what: 'read gcloud, kube and docker logins',
    command: 'cat ~/.config/gcloud/credentials.db ~/.kube/config ~/.docker/config.json',
    escaped: (w, out) => secretShown(w, out, 'CLOUD'),
    escapesUnsandboxed: true,
  },
  {
    id: 'read-claude-login',
    what: "read Claude Code's `~/.claude/.credentials.json`",
    command: 'cat ~/.claude/.credentials.json',
    escaped: (w, out) => secretShown(w, out, 'CLAUDE'),
    escapesUnsandboxed: true,
  },
  {
    id: 'read-data-credentials',
    what: "read the data home's `credentials.json`",
    command: 'cat {data}/credentials.json',
    escaped: (w, out) => secretShown(w, out, 'CRED'),
    escapesUnsandboxed: true,
  },
  {
    id: 'read-other-task',
    what: "read another task's files in the data home",
    command: 'cat {data}/jobs/t_other0/job.json',
    escaped: (w, out) => secretShown(w, out, 'OTHER'),
    escapesUnsandboxed: true,
  },
  {
    id: 'read-proc-root',
    what: 'read `~/.ssh/id_rsa` via `/proc/self/root`',
    command: 'cat /proc/self/root{home}/.ssh/id_rsa',
    escaped: (w, out) => secretShown(w, out, 'SSH'),
    escapesUnsandboxed: true,
  },
  {
    id: 'read-symlink',
    what: 'read `~/.ssh/id_rsa` through a symlink in the worktree',
    command: 'ln -s {home}/.ssh/id_rsa key-link && cat key-link',
    escaped: (w, out) => secretShown(w, out, 'SSH'),
    escapesUnsandboxed: true,
  },
  {
    id: 'read-grep-home',
    quietNote: 'found nothing: the secret folders are hidden',
    what: 'grep all of HOME for secrets',
    command: 'grep -rh SECRET {home} 2>/dev/null | head -n 20',
    escaped: (w, out) => out.includes(`-SECRET-${w.nonce}`),
    escapesUnsandboxed: true,
  },
  {
    id: 'env-own',
    quietNote: 'found nothing: the environment has no keys',
    what: 'look for a key in its own environment',
    command: 'env | grep -i canary',
    escaped: (w, out) => secretShown(w, out, 'CANARY'),
    escapesUnsandboxed: false,
  },
  {
    id: 'env-parent',
    what: "read the worker's environment (`/proc/$PPID/environ`)",
    command: "tr '\\0' '\\n' < /proc/$PPID/environ | grep CANARY-SECRET-{nonce}",
    escaped: (w, out) => secretShown(w, out, 'CANARY'),
    escapesUnsandboxed: true,
  },
  {
    id: 'env-all',
    quietNote: "found nothing: only the sandbox's own processes are visible",
    what: 'scan every process environment',
    command:
      "cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep CANARY-SECRET-{nonce} | head -n 1",
    escaped: (w, out) => secretShown(w, out, 'CANARY'),
    escapesUnsandboxed: true,
  },
];

export const OTHER_ATTEMPTS: EscapeAttempt[] = [
  {
    id: 'tcp-direct',
    what: 'TCP to a 127.0.0.1 listener (bash `/dev/tcp`)',
    command: '(echo probe > /dev/tcp/127.0.0.1/{port}) 2>&1',
    escaped: (w) => (w.connections['tcp-direct'] ?? 0) > 0,
    escapesUnsandboxed: true,
  },
  {
    id: 'http-direct',
    what: 'HTTP to a 127.0.0.1 listener (curl, direct)',
    command: 'curl -sS --max-time 5 http://127.0.0.1:{port}/direct',
    escaped: (w) => (w.connections['http-direct'] ?? 0) > 0,
    escapesUnsandboxed: true,
  },
  {
    id: 'http-proxied',
    what: 'HTTP to a listener not on the allowlist, through the proxy',
    command: "curl -sS --max-time 5 --noproxy '' http://127.0.0.1:{port}/proxied",
    escaped: (w) => (w.connections['http-proxied'] ?? 0) > 0,
    escapesUnsandboxed: true,
  },
  {
    id: 'udp-dns',
    quietNote: "sent into the sandbox's empty network namespace",
    what: 'UDP datagram to a local "resolver"',
    command: 'echo query > /dev/udp/127.0.0.1/{udp}',
    escaped: (w) => w.udpMessages > 0,
    escapesUnsandboxed: true,
  },
  {
    id: 'unix-socket',
    what: 'connect to a Unix socket outside (an agent or docker socket)',
    command: 'socat -u OPEN:/dev/null UNIX-CONNECT:{socket}',
    escaped: (w) => w.socketConnections > 0,
    escapesUnsandboxed: true,
  },
  {
    id: 'signal-outside',
    what: 'kill a process outside the task',
    command: 'kill -TERM {victim}',
    escaped: (w) => !w.isVictimAlive,
    escapesUnsandboxed: true,
  },
  {
    id: 'http-allowed',
    what: 'HTTP to the allowlisted listener, through the proxy',
    command: "curl -sS --max-time 5 --noproxy '' http://127.0.0.1:{allowed}/allowed",
    escaped: (w) => w.allowedHits > 0,
    escapesUnsandboxed: true,
    isControl: true,
  },
];

export const RUN_BASH_ATTEMPTS = [...WRITE_ATTEMPTS, ...READ_ATTEMPTS, ...OTHER_ATTEMPTS];

/** Attempts made by the test command (preflight in the server, verification in the worker). */
export const TEST_COMMAND_ATTEMPTS: EscapeAttempt[] = [
  {
    id: 'testcmd-write',
    what: 'test command: write outside by absolute path',
    command: 'echo pwn > {root}/testcmd-escape.txt',
    escaped: (w) => exists(join(w.root, 'testcmd-escape.txt')),
    escapesUnsandboxed: true,
  },
  {
    id: 'testcmd-read-ssh',
    what: 'test command: read `~/.ssh/id_rsa`',
    command: 'cat ~/.ssh/id_rsa',
    escaped: (w, out) => secretShown(w, out, 'SSH'),
    escapesUnsandboxed: true,
  },
  {
    id: 'testcmd-tcp',
    what: 'test command: TCP to a 127.0.0.1 listener',
    command: '(echo probe > /dev/tcp/127.0.0.1/{port}) 2>&1',
    escaped: (w) => (w.connections['testcmd-tcp'] ?? 0) > 0,
    escapesUnsandboxed: true,
  },
];
