// What an interactive Claude Code session started, found through /proc: its MCP server and its
// monitor's watcher (by what their environment and command line hold), the session id each runs
// under, and the session's screen as text.
import { readFileSync, readdirSync } from 'node:fs';

/** Live processes whose environment holds `entry` (and whose command line has `inCommand`). */
export function processesWithEnv(entry: string, inCommand = ''): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid)
    .filter((name) => {
      try {
        const environment = readFileSync(`/proc/${name}/environ`, 'utf8').split('\0');
        const commandLine = readFileSync(`/proc/${name}/cmdline`, 'utf8').replace(/\0/g, ' ');
        return environment.includes(entry) && commandLine.includes(inCommand);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** A variable of a process's environment; undefined when unset or the process is gone. */
export function environmentValue(pid: number, name: string): string | undefined {
  try {
    const environment = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    return environment.find((entry) => entry.startsWith(`${name}=`))?.slice(name.length + 1);
  } catch {
    return undefined;
  }
}

/** The Claude Code session id a process runs under (CLAUDE_CODE_SESSION_ID in its environment). */
export const sessionOfProcess = (pid: number): string | undefined =>
  environmentValue(pid, 'CLAUDE_CODE_SESSION_ID');

/** The screen's text without ANSI sequences (cursor moves become nothing, not spaces). */
export const plainScreen = (screen: string) =>
  // eslint-disable-next-line no-control-regex
  screen.replace(/\u001b\[[0-9;?]*[A-Za-z]|\u001b\][^\u0007]*\u0007|\u001b[()][A-Z0-9]/g, '');
