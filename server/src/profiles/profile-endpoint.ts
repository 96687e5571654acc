import { UserError } from '../util/user-error.ts';
import { copilotAuth, copilotEndpoint } from './copilot/copilot-profile.ts';
import type { Endpoint } from '../wire/spec.ts';
import { CredentialsError, keyOrigin, storedKey, type StoredKey } from './credentials.ts';
import { isCliFormat } from '../config/config-rules.ts';
import { unapprovedError } from './project-approval.ts';
import type { Environment } from '../config/paths.ts';
import type { ResolvedProfile } from '../config/resolved-profile.ts';

/**
 * Resolves a profile to an endpoint with its key (see `keyFor`). The key goes to the client
 * only; it is never logged or returned.
 */
export function endpointFor(profile: ResolvedProfile, env: Environment): Endpoint {
  // The last door before a request: a profile awaiting the user's approval never gets through.
  if (profile.isUnapproved) throw unapprovedError(profile);
  const endpoint: Endpoint = {
    baseUrl: profile.baseUrl.replace(/\/+$/, ''),
    model: profile.model,
    ...(profile.headers ? { headers: profile.headers } : {}),
  };
  // A GitHub login instead of a key: the client exchanges it for API tokens.
  if (profile.format === 'copilot') return copilotEndpoint(profile, endpoint, env);
  const key = keyFor(profile, env);
  if (key.problem) throw new UserError(key.problem);
  return key.apiKey ? { ...endpoint, apiKey: key.apiKey } : endpoint;
}

/** A short, key-free description of how a profile authenticates, with any problem in capitals. */
export function describeAuth(profile: ResolvedProfile, env: Environment): string {
  return keyFor(profile, env).summary;
}

interface KeyLookup {
  apiKey?: string;
  /** Key-free, for `providers`. */
  summary: string;
  /** Why no call may be made; says what to do. */
  problem?: string;
}

/**
 * Where a profile's key comes from: a key stored for it and for the origin it points at wins;
 * else the variable named by apiKeyEnv (unless a project file names it for a host the user
 * never sends it to); else a stored key for another origin stops the call rather than going
 * out keyless; else no key.
 */
function keyFor(profile: ResolvedProfile, env: Environment): KeyLookup {
  if (profile.format === 'copilot') return copilotAuth(profile, env);
  // A CLI engine with no endpoint of its own uses the CLI's login.
  if (isCliFormat(profile.format) && !profile.baseUrl) return { summary: 'the CLI’s own login' };
  const origin = keyOrigin(profile.baseUrl);
  let stored: StoredKey | undefined;
  try {
    stored = profile.dataHome ? storedKey(profile.dataHome, profile.name) : undefined;
  } catch (error) {
    // A broken credentials.json stops only the profiles that need a key from it.
    if (!(error instanceof CredentialsError)) throw error;
    if (profile.apiKeyEnv) return keyFromEnv(profile, env, origin);
    if (profile.local) return { summary: 'no key needed (credentials.json unreadable)' };
    return {
      summary: 'stored key UNREADABLE: credentials.json is damaged',
      problem: error.message,
    };
  }
  if (stored && stored.origin === origin) {
    return { apiKey: stored.key, summary: `key stored in credentials.json for ${origin}` };
  }
  if (profile.apiKeyEnv) return keyFromEnv(profile, env, origin);
  if (stored) {
    return {
      summary: `stored key was entered for ${stored.origin}, NOT sent to ${origin}: run provider_key again`,
      problem:
        `Profile "${profile.name}" has a stored key entered for ${stored.origin}, but its baseUrl now points at ` +
        `${origin}, so the key was not sent. If you trust ${origin}, ask the user to enter its key: call ` +
        `provider_key {"profile": "${profile.name}"} (or run \`delegate provider-key ${profile.name}\` in a terminal).`,
    };
  }
  return { summary: profile.local ? 'no key needed' : 'no key configured' };
}

function keyFromEnv(profile: ResolvedProfile, env: Environment, origin: string): KeyLookup {
  const variable = profile.apiKeyEnv ?? '';
  if (profile.isKeyEnvUntrusted) {
    return {
      summary: `key from $${variable} REFUSED: a project file may not send it to ${origin}`,
      problem:
        `Profile "${profile.name}" comes from ${profile.origin}, which asks to send $${variable} to ${origin}. ` +
        `A project file may use a key variable only for a host your own config.json sends it to, so the key was ` +
        `not sent. If you trust this project, save the profile to your config with provider_set, or store a key ` +
        `for it with provider_key.`,
    };
  }
  if (env[variable]?.trim()) {
    return { apiKey: env[variable]?.trim(), summary: `key from $${variable} (set)` };
  }
  return {
    summary: `key from $${variable} (NOT SET: export it before starting Claude Code)`,
    problem:
      `Profile "${profile.name}" takes its key from $${variable}, which is not set in the ` +
      `environment of the delegate server. Export ${variable} in the shell you start ` +
      'Claude Code from and restart it, store a key with provider_key, or use another profile.',
  };
}
