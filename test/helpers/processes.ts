import { readFileSync, readdirSync } from 'node:fs';

/** SIGKILL, ignoring a process (or, with a negative id, a group) that is already gone. */
export function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** Live (non-zombie) processes, straight from /proc, that `keep` accepts given their stat fields and command line. */
export function liveProcesses(
  keep: (facts: { pid: number; group: number; commandLine: string }) => boolean,
): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((entry) => {
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        const [state, , group] = stat
          .slice(stat.lastIndexOf(')') + 1)
          .trim()
          .split(/\s+/);
        if (state === 'Z') return [];
        const commandLine = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
        return keep({ pid: Number(entry), group: Number(group), commandLine })
          ? [Number(entry)]
          : [];
      } catch {
        return [];
      }
    });
}
