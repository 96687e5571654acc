import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { CliEngine } from './cli-engine.ts';

/** What of a CLI profile decides its sandbox. */
interface CliProfile {
  baseUrl?: string;
}

/**
 * The hosts a CLI task's sandbox lets through on top of `allowHosts`: the profile endpoint's
 * `host:port`, else the hosts the CLI calls with the user's own login. A name the proxy would
 * resolve to loopback is refused unless the IP literal is allowed, so `localhost` brings its
 * loopback addresses.
 */
export function cliEndpointHosts(engine: CliEngine, profile: CliProfile): string[] {
  if (!profile.baseUrl) return [...engine.loginHosts];
  const url = new URL(profile.baseUrl);
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  const hosts = [`${url.hostname}:${port}`];
  if (url.hostname === 'localhost') hosts.push(`127.0.0.1:${port}`, `[::1]:${port}`);
  return hosts;
}

/**
 * What the CLI needs inside the sandbox beyond the task dir: its private state folder
 * (`jobs/<id>/cli-state`, under the otherwise hidden data home) writable, and, for a login
 * profile, the user's login files readable (Claude Code's is on the secret list).
 */
export function cliSandboxPaths(
  engine: CliEngine,
  profile: CliProfile,
  stateDir: string,
  userHome: string,
): { readable: string[]; writable: string[] } {
  const logins = profile.baseUrl
    ? []
    : engine.loginFiles.map((file) => join(userHome, file)).filter((path) => existsSync(path));
  return { readable: logins, writable: [stateDir] };
}
