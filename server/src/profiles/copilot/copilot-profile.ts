import { keyOrigin } from '../credentials.ts';
import type { Environment } from '../../config/paths.ts';
import { UserError } from '../../util/user-error.ts';
import type { Endpoint } from '../../wire/spec.ts';
import { githubUrls } from '../../config/copilot-endpoints.ts';
import { readCopilotState, usableLogin, type CopilotPlace } from './copilot-store.ts';
import type { ResolvedProfile } from '../../config/resolved-profile.ts';

/** A copilot profile's endpoint: where its login lives instead of a key. */
export interface CopilotEndpoint extends Endpoint {
  copilot: CopilotPlace & { profile: string };
}

/** Where a copilot profile's login lives: one per Copilot API origin, shared by its profiles. */
export function copilotPlace(profile: ResolvedProfile, env: Environment): CopilotPlace {
  if (!profile.dataHome) {
    throw new UserError(`Profile "${profile.name}" has no data home to keep a Copilot login in.`);
  }
  return {
    dataHome: profile.dataHome,
    apiOrigin: keyOrigin(profile.baseUrl),
    github: githubUrls(env),
  };
}

/**
 * How a copilot profile authenticates, key-free, for `providers`; `problem` when no call can be
 * made. A pending login is no problem: the call polls it once and may find it approved.
 */
export function copilotAuth(
  profile: ResolvedProfile,
  env: Environment,
): { summary: string; problem?: string } {
  const place = profile.dataHome ? copilotPlace(profile, env) : undefined;
  const state = place ? readCopilotState(place.dataHome) : undefined;
  if (place && state && usableLogin(state, place)) {
    return { summary: `GitHub login stored in credentials.json for ${place.apiOrigin}` };
  }
  const pending = place ? state?.pending[place.apiOrigin] : undefined;
  if (pending && !pending.outcome && Date.now() < pending.expiresAt) {
    return {
      summary: `GitHub login PENDING: the user enters ${pending.userCode} at ${pending.verificationUri}`,
    };
  }
  const origin = keyOrigin(profile.baseUrl);
  return {
    summary: `NOT LOGGED IN to GitHub Copilot for ${origin}: call provider_key`,
    problem: notLoggedInText(profile.name, origin),
  };
}

export function notLoggedInText(name: string, origin: string): string {
  return (
    `Profile "${name}" (copilot) has no GitHub login for ${origin}. Call provider_key ` +
    `{"profile": "${name}"}: it shows a code for the user to enter on github.com (or the user runs ` +
    `\`delegate copilot-login ${name}\` in a terminal).`
  );
}

/** The endpoint of a copilot profile; refuses at once when it has no login at all. */
export function copilotEndpoint(
  profile: ResolvedProfile,
  endpoint: Endpoint,
  env: Environment,
): CopilotEndpoint {
  const auth = copilotAuth(profile, env);
  if (auth.problem) throw new UserError(auth.problem);
  return { ...endpoint, copilot: { ...copilotPlace(profile, env), profile: profile.name } };
}
