import { existsSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Everything an attempt's command may name, and what the test saw afterwards. */
export interface EscapeWorld {
  /** Outside the project, the data home and HOME: nothing there belongs to the task. */
  root: string;
  project: string;
  data: string;
  home: string;
  nonce: string;
  /** The task's worktree and id, known once it started. */
  worktree: string;
  taskId: string;
  /** A TCP listener per network attempt: its port and how many connections it got. */
  ports: Record<string, number>;
  connections: Record<string, number>;
  allowedPort: number;
  allowedHits: number;
  udpPort: number;
  udpMessages: number;
  socketPath: string;
  socketConnections: number;
  victimPid: number;
  isVictimAlive: boolean;
  /** main's commit count and the bare remote's refs, before and after. */
  mainCommitsBefore: number;
  mainCommitsAfter: number;
  remoteRefs: string;
  configBytesBefore: number;
  credentialBytesBefore: number;
}

export interface EscapeAttempt {
  id: string;
  /** What the attempt tries, for the table. */
  what: string;
  /** The command run_bash runs; `{name}` is replaced from the world (ports by attempt id). */
  command: string;
  /** True when the attempt reached what it went for (judged on the host, or by a secret in its output). */
  escaped(world: EscapeWorld, output: string): boolean;
  /** Whether it escapes with `sandbox: off` (asserted, so the table shows what really happens). */
  escapesUnsandboxed: boolean;
  /** A control: allowed in both modes (not an escape), shown as "reached". */
  isControl?: boolean;
  /** What happens in the sandbox when the command itself reports no error. */
  quietNote?: string;
}

export const exists = (path: string) => existsSync(path);
export const contains = (path: string, text: string) => {
  try {
    return readFileSync(path, 'utf8').includes(text);
  } catch {
    return false;
  }
};
export const sizeOf = (path: string) => (existsSync(path) ? statSync(path).size : 0);
export const secretShown = (world: EscapeWorld, output: string, kind: string) =>
  output.includes(`${kind}-SECRET-${world.nonce}`);
/** The real git, found past the guard that run_bash puts first on PATH. */
export const REAL_GIT = '$(type -P -a git | grep -v bin-guard | head -n1)';

/** `{name}` placeholders filled in from the world; `{port}` is the attempt's own listener. */
export function fillCommand(attempt: EscapeAttempt, world: EscapeWorld): string {
  const values: Record<string, string> = {
    root: world.root,
    project: world.project,
    data: world.data,
    home: world.home,
    nonce: world.nonce,
    port: String(world.ports[attempt.id] ?? 0),
    allowed: String(world.allowedPort),
    udp: String(world.udpPort),
    socket: world.socketPath,
    victim: String(world.victimPid),
  };
  return attempt.command.replace(/\{(\w+)\}/g, (whole, name: string) => values[name] ?? whole);
}

/** Files an attempt may have left in shared places outside the test's temp folder. */
export function removeSharedLeftovers(nonce: string): void {
  for (const dir of ['/tmp', '/dev/shm']) {
    for (const name of readdirSync(dir)) {
      if (name.startsWith('delegate-escape-') && name.includes(nonce)) {
        rmSync(join(dir, name), { force: true });
      }
    }
  }
}
