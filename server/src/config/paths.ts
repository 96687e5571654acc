import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** Environment variables every entry point reads; a subset of `process.env`. */
export type Environment = Readonly<Record<string, string | undefined>>;

/**
 * The data home shared by every session, project and entry point (server, hooks, monitor,
 * CLI, status line): `$DELEGATE_HOME`, else `~/.delegate`. It must not depend on variables
 * only some entry points get, such as `CLAUDE_PLUGIN_DATA`.
 */
export function resolveDataHome(env: Environment): string {
  const fromEnv = env.DELEGATE_HOME?.trim();
  if (fromEnv) return resolve(fromEnv);
  return join(env.HOME?.trim() || homedir(), '.delegate');
}

/** The project a server or hook serves: `$CLAUDE_PROJECT_DIR`, else the working directory. */
export function resolveProjectDir(env: Environment, cwd: string): string {
  const fromEnv = env.CLAUDE_PROJECT_DIR?.trim();
  return resolve(fromEnv || cwd);
}

export function configPath(dataHome: string): string {
  return join(dataHome, 'config.json');
}

/** Stored keys (mode 0600); never read by anything but the key lookup and the key tools. */
export function credentialsPath(dataHome: string): string {
  return join(dataHome, 'credentials.json');
}

/** Serialises read-modify-write of config.json and credentials.json across processes. */
export function settingsLockPath(dataHome: string): string {
  return join(dataHome, 'locks', 'settings');
}

export function projectConfigPath(projectDir: string): string {
  return join(projectDir, '.claude', 'delegate.json');
}

/**
 * Running servers, one file each, named after the pid of the client process (Claude Code) they
 * serve and holding their own pid: hooks/fallback.sh skips the command path of a hook while that
 * session's server is alive, because its `mcp_tool` hook answers in-process.
 */
export function hookServersDir(dataHome: string): string {
  return join(dataHome, 'hook-servers');
}

export function resultsDir(dataHome: string): string {
  return join(dataHome, 'results');
}

export function jobsDir(dataHome: string): string {
  return join(dataHome, 'jobs');
}

export function slotsDir(dataHome: string): string {
  return join(dataHome, 'slots');
}

export function budgetLockPath(dataHome: string): string {
  return join(dataHome, 'budget', 'lock');
}

/** Big tool outputs the output guard saved whole, for the worker (bounded retention). */
export function outputsDir(dataHome: string): string {
  return join(dataHome, 'outputs');
}
