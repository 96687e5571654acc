import { UserError } from '../util/user-error.ts';
import type { Endpoint } from '../providers/spec.ts';
import type { ResolvedProfile } from './load-config.ts';
import type { Environment } from './paths.ts';

/**
 * Resolves a profile to an endpoint, reading its key from the environment variable the
 * profile names. The key goes to the client only; it is never logged or returned.
 */
export function endpointFor(profile: ResolvedProfile, env: Environment): Endpoint {
  const endpoint: Endpoint = {
    baseUrl: profile.baseUrl.replace(/\/+$/, ''),
    model: profile.model,
    ...(profile.headers ? { headers: profile.headers } : {}),
  };
  if (!profile.apiKeyEnv) return endpoint;
  const apiKey = env[profile.apiKeyEnv]?.trim();
  if (!apiKey) {
    throw new UserError(
      `Profile "${profile.name}" takes its key from $${profile.apiKeyEnv}, which is not set in the ` +
        `environment of the delegate server. Export ${profile.apiKeyEnv} in the shell you start ` +
        'Claude Code from and restart it, or use another profile.',
    );
  }
  return { ...endpoint, apiKey };
}

/** A short, key-free description of how a profile authenticates. */
export function describeAuth(profile: ResolvedProfile, env: Environment): string {
  if (profile.apiKeyEnv) {
    return env[profile.apiKeyEnv]?.trim()
      ? `key from $${profile.apiKeyEnv} (set)`
      : `key from $${profile.apiKeyEnv} (NOT SET: export it before starting Claude Code)`;
  }
  return profile.local ? 'no key needed' : 'no key configured';
}
