import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import { UserError } from '../util/user-error.ts';
import { configPath, projectConfigPath, type Environment } from './paths.ts';
import { configSchema, profileSchema, type ConfigFile, type Profile } from './schema.ts';

export type ProfileSource = 'config' | 'project' | 'env' | 'discovered';

export interface ResolvedProfile extends Profile {
  name: string;
  source: ProfileSource;
  /** The file or variables the profile came from, for `providers` and error messages. */
  origin: string;
}

export interface LoadedConfig {
  profiles: ReadonlyMap<string, ResolvedProfile>;
  /** Spending caps; the project file's values win per field. */
  budget: { dailyUsd?: number; perTaskUsd?: number };
  /** The default named by a config file, if any (validated to exist). */
  defaultProfile?: string;
  /** Config files that were found and read. */
  files: string[];
  /** Where the user's config lives, whether or not it exists yet. */
  configFile: string;
}

export const ENV_PROFILE_NAME = 'env';

/** Reads and validates `config.json` and the project's `.claude/delegate.json`, project winning. */
export function loadConfig(dataHome: string, projectDir: string, env: Environment): LoadedConfig {
  const profiles = new Map<string, ResolvedProfile>();
  const files: string[] = [];
  let defaultProfile: { name: string; file: string } | undefined;
  let budget: LoadedConfig['budget'] = {};
  const layers: Array<[string, ProfileSource]> = [
    [configPath(dataHome), 'config'],
    [projectConfigPath(projectDir), 'project'],
  ];
  for (const [file, source] of layers) {
    const config = readConfigFile(file);
    if (!config) continue;
    files.push(file);
    for (const [name, profile] of Object.entries(config.profiles ?? {})) {
      profiles.set(name, { ...profile, name, source, origin: file });
    }
    if (config.defaultProfile) defaultProfile = { name: config.defaultProfile, file };
    budget = { ...budget, ...config.budget };
  }
  checkFailoverChains(profiles);
  const envProfile = readEnvProfile(env);
  if (envProfile && !profiles.has(ENV_PROFILE_NAME)) profiles.set(ENV_PROFILE_NAME, envProfile);
  if (defaultProfile && !profiles.has(defaultProfile.name)) {
    throw new UserError(
      `Invalid config in ${defaultProfile.file}: defaultProfile "${defaultProfile.name}" is not a profile ` +
        `(profiles: ${listNames(profiles)}). Set it to one of them or remove it.`,
    );
  }
  return {
    profiles,
    budget,
    defaultProfile: defaultProfile?.name,
    files,
    configFile: configPath(dataHome),
  };
}

function readConfigFile(file: string): ConfigFile | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new UserError(`Cannot read config ${file}: ${(error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new UserError(
      `Invalid config in ${file}: not valid JSON (${(error as Error).message}). ` +
        'Fix the syntax (no comments or trailing commas) and call again.',
    );
  }
  const parsed = configSchema.safeParse(json);
  if (!parsed.success) {
    throw new UserError(
      `Invalid config in ${file}:\n${formatIssues(parsed.error.issues)}\n` +
        'Fix these fields and call again; changes take effect at the next call.',
    );
  }
  return parsed.data;
}

/** The environment-only profile: `DELEGATE_BASE_URL`, `DELEGATE_FORMAT`, `DELEGATE_MODEL`, `DELEGATE_API_KEY_ENV`. */
function readEnvProfile(env: Environment): ResolvedProfile | undefined {
  const baseUrl = env.DELEGATE_BASE_URL?.trim();
  const model = env.DELEGATE_MODEL?.trim();
  if (!baseUrl && !model) return undefined;
  const candidate = {
    format: env.DELEGATE_FORMAT?.trim() || 'openai',
    baseUrl,
    model,
    ...(env.DELEGATE_API_KEY_ENV?.trim() ? { apiKeyEnv: env.DELEGATE_API_KEY_ENV.trim() } : {}),
  };
  const parsed = profileSchema.safeParse(candidate);
  if (!parsed.success) {
    const variables: Record<string, string> = {
      format: 'DELEGATE_FORMAT',
      baseUrl: 'DELEGATE_BASE_URL',
      model: 'DELEGATE_MODEL',
      apiKeyEnv: 'DELEGATE_API_KEY_ENV',
    };
    const lines = parsed.error.issues.map((issue) => {
      const field = String(issue.path[0] ?? '');
      return `- ${variables[field] ?? field}: ${issue.message}`;
    });
    throw new UserError(
      `Invalid environment profile:\n${lines.join('\n')}\n` +
        'Set DELEGATE_BASE_URL and DELEGATE_MODEL together (DELEGATE_FORMAT openai|anthropic, ' +
        'DELEGATE_API_KEY_ENV the name of the variable holding the key), or unset them.',
    );
  }
  const local = isLoopbackUrl(parsed.data.baseUrl);
  return {
    ...parsed.data,
    ...(local ? { local } : {}),
    name: ENV_PROFILE_NAME,
    source: 'env',
    origin: 'DELEGATE_* environment variables',
  };
}

export function isLoopbackUrl(url: string): boolean {
  const host = new URL(url).hostname;
  return host === 'localhost' || host === '[::1]' || /^127\./.test(host);
}

function formatIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((issue) => {
      const field = issue.path.map(String).join('.') || '(top level)';
      if (issue.code === 'unrecognized_keys') {
        return `- ${field}: unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys
          .map((key) => `"${key}"`)
          .join(', ')} (check the spelling; this version does not support it)`;
      }
      const missing = issue.code === 'invalid_type' && issue.input === undefined;
      return `- ${field}: ${missing ? 'is required; it ' : ''}${issue.message}`;
    })
    .join('\n');
}

export function listNames(profiles: ReadonlyMap<string, unknown>): string {
  return profiles.size ? [...profiles.keys()].join(', ') : 'none';
}

/**
 * A local profile never fails over (its data must stay on this machine) and is never the
 * failover target of a non-local one (the chain would pull a cloud call onto it); chains only
 * name existing profiles.
 */
function checkFailoverChains(profiles: ReadonlyMap<string, ResolvedProfile>): void {
  for (const profile of profiles.values()) {
    const chain = profile.failover ?? [];
    const where = `Invalid config in ${profile.origin}: profiles.${profile.name}.failover`;
    if (chain.length > 0 && profile.local) {
      throw new UserError(
        `${where}: a local profile never fails over (its data stays on this machine). Remove the failover list.`,
      );
    }
    for (const target of chain) {
      const next = profiles.get(target);
      if (!next || target === profile.name) {
        throw new UserError(
          `${where}: "${target}" is not another profile (profiles: ${listNames(profiles)}).`,
        );
      }
      if (next.local) {
        throw new UserError(
          `${where}: "${target}" is local; a cloud profile never fails over to a local one. Remove it from the list.`,
        );
      }
    }
  }
}
