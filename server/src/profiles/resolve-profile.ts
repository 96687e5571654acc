import { UserError } from '../util/user-error.ts';
import {
  DISCOVERED_PROFILE_NAME,
  describeLocalPorts,
  discoverLocalServer,
  discoveredProfile,
  type DiscoveredServer,
} from './discover-local.ts';
import { ENV_PROFILE_NAME } from './env-profile.ts';
import { listNames, type LoadedConfig } from './read-config.ts';
import { localFlagError, localNameProblem } from './local-address.ts';
import { unapprovedError } from './project-approval.ts';
import type { Environment } from '../config/paths.ts';
import type { ResolvedProfile } from '../config/resolved-profile.ts';

export type Discover = (env: Environment) => Promise<DiscoveredServer | undefined>;

/**
 * Picks the profile for a call: the one named, else the configured default, else the
 * environment-only profile, else the only profile, else a local server found on the usual
 * ports. Every failure says how to fix it; a profile only a project file defines, at an
 * endpoint the user has not approved, is refused (project-approval.ts). A profile marked `local` whose host is a name must
 * resolve to local addresses only (literal addresses were checked when the config was read).
 */
export async function resolveProfile(
  config: LoadedConfig,
  requested: string | undefined,
  env: Environment,
  discover: Discover = discoverLocalServer,
): Promise<ResolvedProfile> {
  const profile = await pickProfile(config, requested, env, discover);
  const problem = profile.local ? await localNameProblem(profile.baseUrl, env) : undefined;
  if (problem) throw localFlagError(profile, problem);
  return profile;
}

async function pickProfile(
  config: LoadedConfig,
  requested: string | undefined,
  env: Environment,
  discover: Discover,
): Promise<ResolvedProfile> {
  if (requested !== undefined) {
    const profile = findProfile(config, requested);
    if (profile) return approved(profile);
    // The discovered profile answers to its name too (a task's worker asks for it by name).
    const found = requested === DISCOVERED_PROFILE_NAME ? await discover(env) : undefined;
    if (found) return discoveredProfile(found);
    throw new UserError(
      `Unknown profile "${requested}". Profiles: ${listNames(config.profiles)}. ` +
        'Call providers to see them, or omit profile to use the default.',
    );
  }
  const name = defaultProfileName(config);
  const chosen = name === undefined ? undefined : findProfile(config, name);
  if (chosen) return approved(chosen);
  const all = allNames(config);
  if (all.length > 1) {
    throw new UserError(
      `Several profiles (${all.join(', ')}) and no defaultProfile: pass profile, or set ` +
        `"defaultProfile" in ${config.files.join(' or ')}.`,
    );
  }
  const server = await discover(env);
  if (server) return discoveredProfile(server);
  throw new UserError(noWorkerMessage(config.configFile));
}

/**
 * The profile a call without one uses, if the config names one: `defaultProfile`, else the
 * environment profile, else the only profile. Profiles awaiting approval count, so that a
 * project file's choice is refused with its reason rather than replaced by another.
 */
export function defaultProfileName(config: LoadedConfig): string | undefined {
  const names = allNames(config);
  return (
    config.defaultProfile ??
    (config.profiles.has(ENV_PROFILE_NAME) ? ENV_PROFILE_NAME : undefined) ??
    (names.length === 1 ? names[0] : undefined)
  );
}

function allNames(config: LoadedConfig): string[] {
  return [...config.profiles.keys(), ...(config.unapproved?.keys() ?? [])];
}

/** The profile of that name, approved or not; undefined when there is none. */
export function findProfile(config: LoadedConfig, name: string): ResolvedProfile | undefined {
  return config.profiles.get(name) ?? config.unapproved?.get(name);
}

/** The profile, for a call; one the user has not approved fails with how to approve it. */
export function approved(profile: ResolvedProfile): ResolvedProfile {
  if (profile.isUnapproved) throw unapprovedError(profile);
  return profile;
}

export function noWorkerMessage(configFile: string): string {
  return [
    `No worker is configured and no local model server answered on the usual ports (${describeLocalPorts()}).`,
    'Either start one, e.g. `ollama serve` then `ollama pull qwen3-coder:30b` (or load a model in LM Studio and start its server),',
    `or add a profile to ${configFile}, e.g.`,
    '{"profiles":{"fast":{"format":"openai","baseUrl":"https://api.deepseek.com/v1","model":"deepseek-chat","apiKeyEnv":"DEEPSEEK_API_KEY"}}}',
    '(or set DELEGATE_BASE_URL, DELEGATE_MODEL and DELEGATE_API_KEY_ENV in the environment Claude Code starts from).',
  ].join(' ');
}
