// The built `delegate` CLI as a long-running child (watch, wait): its output line by line, its
// CPU time from /proc, and a stop that leaves nothing behind.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PLUGIN_ROOT } from './mcp-server.ts';

export const CLI_BUNDLE = join(PLUGIN_ROOT, 'dist', 'cli.mjs');

export interface CliProcess {
  child: ChildProcess;
  /** Complete stdout lines so far. */
  lines(): string[];
  stderr(): string;
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
  /** User + system CPU time so far, in milliseconds (Linux /proc). */
  cpuMs(): number;
  stop(): Promise<void>;
}

export function startCli(
  args: string[],
  options: { env: Record<string, string>; cwd: string; command?: string[] },
): CliProcess {
  const [command, ...prefix] = options.command ?? [process.execPath, CLI_BUNDLE];
  const child = spawn(command!, [...prefix, ...args], {
    env: options.env,
    cwd: options.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  return {
    child,
    lines: () => stdout.split('\n').slice(0, -1),
    stderr: () => stderr,
    exited,
    cpuMs: () => cpuMsOf(child.pid!),
    stop: async () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // Already gone.
      }
      await exited;
    },
  };
}

/** utime + stime of a process, from /proc/<pid>/stat (clock ticks of 10 ms). */
export function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 of the whole line are 12 and 13 after "pid (comm) ".
  return (Number(fields[11]) + Number(fields[12])) * 10;
}
