/**
 * The config as a call sees it: the user's `config.json` and the project's
 * `.claude/delegate.json`, merged (the project may tighten, never loosen), with the environment
 * profile and the project approvals applied. Validation goes through config-validation.ts, so
 * this module loads no zod: the server and the CLI use it through load-config.ts, which gives
 * it the schemas; a task worker through `readConfigLazily`.
 */
import { problemPlace, readJsonFile } from '../util/read-json.ts';
import { UserError } from '../util/user-error.ts';
import { keyOrigin } from './credentials.ts';
import { localFlagError, localFlagProblem } from './local-address.ts';
import { configPath, projectConfigPath, type Environment } from '../config/paths.ts';
import { keepUserEndpoint } from './project-overrides.ts';
import { checkFailoverChains } from './failover-rules.ts';
import { setApartUnapproved } from './project-approval.ts';
import { ENV_PROFILE_NAME, ENV_VARIABLES, readEnvProfile } from './env-profile.ts';
import { readUnlessChanged, settledFingerprint, type KeptReads } from '../util/file-fingerprint.ts';
import type { ConfigFile, RunnerConfig } from '../config/schema.ts';
import { ConfigSchemasNotLoaded, loadConfigSchemas, validConfig } from './config-validation.ts';
import { SANDBOX_MODES, type SandboxMode } from '../config/config-rules.ts';
import type { ProfileSource, ResolvedProfile } from '../config/resolved-profile.ts';

export interface LoadedConfig {
  /** Every profile a call may use. */
  profiles: ReadonlyMap<string, ResolvedProfile>;
  /**
   * Profiles only the project file defines, at endpoints the user has not approved for it
   * (see project-approval.ts): never called; a call that would use one fails saying how to
   * approve it.
   */
  unapproved?: ReadonlyMap<string, ResolvedProfile>;
  /** Spending caps; a project file may lower the user's caps, never raise them. */
  budget: { dailyUsd?: number; perTaskUsd?: number };
  /** Fix rounds and the reviewer pass of tasks; the project file's values win per field. */
  tasks: NonNullable<ConfigFile['tasks']>;
  /**
   * The task sandbox: the strictest mode any file sets (default `auto`), so a project file can
   * tighten the user's choice but never loosen it. Always set by loadConfig.
   */
  sandbox?: SandboxMode;
  /** The default named by a config file, if any (validated to exist). */
  defaultProfile?: string;
  /** The file that named `defaultProfile`. */
  defaultFrom?: string;
  /** Set when DELEGATE_BASE_URL/DELEGATE_MODEL are set but a configured profile named "env" wins. */
  envProfileIgnored?: string;
  /** Machines tasks can run their commands on: from the user's config only. */
  runners?: ReadonlyMap<string, RunnerConfig>;
  /** The profiles `profile: "auto"` may choose from (see choose-profile.ts): the user's config only. */
  autoProfiles?: readonly string[];
  /** Claude Code subagent types whose calls a worker answers (type → profile): the user's config only. */
  subagents?: ReadonlyMap<string, string>;
  /** Project-file settings that were not applied (see `keepUserEndpoint`), for `providers`. */
  warnings?: string[];
  /** Config files that were found and read. */
  files: string[];
  /** Where the user's config lives, whether or not it exists yet. */
  configFile: string;
}

/** The lower of two optional limits. */
const lower = (a?: number, b?: number) =>
  a === undefined ? b : b === undefined ? a : Math.min(a, b);

/**
 * Caps merged so that each layer can only tighten what came before: a cloned repository's
 * `.claude/delegate.json` must not lift the spending limits its user set.
 */
function tighterBudget(
  before: LoadedConfig['budget'],
  layer: LoadedConfig['budget'] | undefined,
): LoadedConfig['budget'] {
  const dailyUsd = lower(before.dailyUsd, layer?.dailyUsd);
  const perTaskUsd = lower(before.perTaskUsd, layer?.perTaskUsd);
  return {
    ...(dailyUsd !== undefined ? { dailyUsd } : {}),
    ...(perTaskUsd !== undefined ? { perTaskUsd } : {}),
  };
}

/** Task settings, the later layer winning, except the resource limits, which it can only lower. */
function tighterLimits(
  before: LoadedConfig['tasks'],
  layer: LoadedConfig['tasks'] | undefined,
): LoadedConfig['tasks'] {
  const maxProcesses = lower(before.maxProcesses, layer?.maxProcesses);
  const maxMemoryMb = lower(before.maxMemoryMb, layer?.maxMemoryMb);
  return {
    ...before,
    ...layer,
    ...(maxProcesses !== undefined ? { maxProcesses } : {}),
    ...(maxMemoryMb !== undefined ? { maxMemoryMb } : {}),
  };
}

/**
 * Reads and validates `config.json` and the project's `.claude/delegate.json`, project winning.
 * `userConfig` stands in for config.json's content: provider_set checks a change this way
 * before writing it. Throws ConfigSchemasNotLoaded when a file needs validating and this
 * process has not loaded the schemas (only a task worker runs without them).
 *
 * Every model call reads the config, so a change takes effect at the next call. While neither
 * file nor the environment profile has changed since the last read (`settledFingerprint`: a
 * stat of each), that read's result is returned again: the same object, which no caller changes.
 */
export function readConfig(
  dataHome: string,
  projectDir: string,
  env: Environment,
  userConfig?: unknown,
): LoadedConfig {
  if (userConfig !== undefined) return assembleConfig(dataHome, projectDir, env, userConfig);
  return readUnlessChanged(
    lastReads,
    `${dataHome}\0${projectDir}`,
    configFingerprint(dataHome, projectDir, env),
    () => assembleConfig(dataHome, projectDir, env),
  );
}

/** The last config read per data home and project, with what it was read from. */
const lastReads: KeptReads<LoadedConfig> = new Map();

/** Both files' fingerprints and the environment profile's variables; undefined while a file is settling. */
function configFingerprint(
  dataHome: string,
  projectDir: string,
  env: Environment,
): string | undefined {
  const user = settledFingerprint(configPath(dataHome));
  const project = settledFingerprint(projectConfigPath(projectDir));
  if (user === undefined || project === undefined) return undefined;
  return JSON.stringify([user, project, ...ENV_VARIABLES.map((name) => env[name] ?? null)]);
}

function assembleConfig(
  dataHome: string,
  projectDir: string,
  env: Environment,
  userConfig?: unknown,
): LoadedConfig {
  const profiles = new Map<string, ResolvedProfile>();
  const files: string[] = [];
  let defaultProfile: { name: string; file: string } | undefined;
  let budget: LoadedConfig['budget'] = {};
  const sandboxBySource: Partial<Record<ProfileSource, SandboxMode>> = {};
  const userProfiles: ResolvedProfile[] = [];
  let approvals: unknown;
  const warnings: string[] = [];
  let tasks: LoadedConfig['tasks'] = {};
  const runners = new Map<string, RunnerConfig>();
  let subagents: ReadonlyMap<string, string> | undefined;
  let autoProfiles: readonly string[] | undefined;
  const layers: Array<[string, ProfileSource]> = [
    [configPath(dataHome), 'config'],
    [projectConfigPath(projectDir), 'project'],
  ];
  for (const [file, source] of layers) {
    const config =
      source === 'config' && userConfig !== undefined
        ? validConfig(file, undefined, userConfig)
        : readConfigFile(file);
    if (!config) continue;
    files.push(file);
    for (const [name, profile] of Object.entries(config.profiles ?? {})) {
      const replaced = profiles.get(name);
      let resolved: ResolvedProfile = { ...profile, name, source, origin: file, dataHome };
      if (replaced) resolved.replaces = replaced.origin;
      if (replaced?.source === 'config' && source === 'project') {
        const kept = keepUserEndpoint(resolved, replaced);
        resolved = kept.profile;
        if (kept.warning) warnings.push(kept.warning);
      }
      if (source === 'config') userProfiles.push(resolved);
      profiles.set(name, resolved);
    }
    if (config.defaultProfile) defaultProfile = { name: config.defaultProfile, file };
    budget = tighterBudget(budget, config.budget);
    if (config.sandbox) sandboxBySource[source] = config.sandbox;
    tasks = tighterLimits(tasks, config.tasks);
    if (source === 'config') approvals = config.projectApprovals;
    else if (config.projectApprovals) warnings.push(selfApprovalWarning(file, dataHome));
    if (config.runners && source === 'project') {
      warnings.push(
        `WARNING: ${file} defines runners (${Object.keys(config.runners).join(', ')}), which only your own config may do: a repository must not choose which machines your tasks log in to. They are ignored; add the ones you trust to ${configPath(dataHome)}.`,
      );
    } else {
      for (const [name, runner] of Object.entries(config.runners ?? {})) runners.set(name, runner);
    }
    if (config.subagents && source === 'project') {
      warnings.push(
        `WARNING: ${file} maps Claude Code subagents to workers (${Object.keys(config.subagents).join(', ')}), which only your own config may do: a repository must not choose where your subagents' work goes. Ignored; add the mapping to ${configPath(dataHome)}.`,
      );
    } else if (config.subagents) {
      subagents = new Map(Object.entries(config.subagents));
    }
    if (config.autoProfiles && source === 'project') {
      warnings.push(
        `WARNING: ${file} sets autoProfiles (${config.autoProfiles.join(', ')}), which only your own config may do: a repository must not widen where "auto" may send your work. Ignored; set it in ${configPath(dataHome)}.`,
      );
    } else if (config.autoProfiles) {
      autoProfiles = config.autoProfiles;
    }
  }
  checkFailoverChains(profiles);
  const envProfile = readEnvProfile(env, dataHome);
  const configuredEnv = profiles.get(ENV_PROFILE_NAME);
  if (envProfile && !configuredEnv) profiles.set(ENV_PROFILE_NAME, envProfile);
  // The environment profile is the user's too: a project's "env" takes its name, not its endpoint.
  if (envProfile && configuredEnv?.source === 'project') {
    const kept = keepUserEndpoint(configuredEnv, envProfile);
    profiles.set(ENV_PROFILE_NAME, kept.profile);
    if (kept.warning) warnings.push(kept.warning);
  }
  checkLocalFlags(profiles);
  const trusted = envProfile ? [...userProfiles, envProfile] : userProfiles;
  markUntrustedKeyEnvs(profiles, trusted);
  const unapproved = setApartUnapproved(
    profiles,
    new Set(trusted.map((profile) => profile.name)),
    approvals,
  );
  if (
    defaultProfile &&
    !profiles.has(defaultProfile.name) &&
    !unapproved.has(defaultProfile.name)
  ) {
    throw new UserError(
      `Invalid config in ${defaultProfile.file}: defaultProfile "${defaultProfile.name}" is not a profile ` +
        `(profiles: ${listNames(profiles)}). Set it to one of them or remove it.`,
    );
  }
  return {
    profiles,
    ...(unapproved.size ? { unapproved } : {}),
    budget,
    tasks,
    sandbox: strictestSandbox(sandboxBySource.config ?? 'auto', sandboxBySource.project),
    defaultProfile: defaultProfile?.name,
    ...(defaultProfile ? { defaultFrom: defaultProfile.file } : {}),
    ...(envProfile && configuredEnv
      ? {
          envProfileIgnored: `DELEGATE_BASE_URL/DELEGATE_MODEL are set, but the profile "env" in ${configuredEnv.origin} takes that name and wins; rename it to use the environment profile.`,
        }
      : {}),
    runners,
    ...(subagents ? { subagents } : {}),
    ...(autoProfiles ? { autoProfiles } : {}),
    ...(warnings.length ? { warnings } : {}),
    files,
    configFile: configPath(dataHome),
  };
}

function selfApprovalWarning(file: string, dataHome: string): string {
  return `WARNING: ${file} sets projectApprovals, which only your own config (${configPath(dataHome)}) may hold: a repository cannot approve its own endpoints. It is ignored.`;
}

/** `local: true` on a literal address that is not local is refused (names: see local-address.ts). */
function checkLocalFlags(profiles: ReadonlyMap<string, ResolvedProfile>): void {
  for (const profile of profiles.values()) {
    const problem = profile.local ? localFlagProblem(profile.baseUrl) : undefined;
    if (problem) throw localFlagError(profile, problem);
  }
}

function readConfigFile(file: string): ConfigFile | undefined {
  const read = readJsonFile(file);
  if (read === undefined) return undefined;
  if ('problem' in read) {
    throw new UserError(
      `Invalid config in ${problemPlace(file, read)}: ${read.problem.replace(/^is /, '')}. ` +
        'Fix the syntax (no comments or trailing commas) and call again.',
    );
  }
  return validConfig(file, read.text, read.value);
}

/**
 * A project's `.claude/delegate.json` comes with the repository, so it is not trusted with the
 * user's keys: its profile may name a key variable only when the user's own config.json (or
 * DELEGATE_API_KEY_ENV) already sends that variable to the same origin. Otherwise a cloned repo
 * could point $OPENAI_API_KEY at a host of its choosing. Stored keys need no such rule: each is
 * bound to the origin the user entered it for.
 */
function markUntrustedKeyEnvs(
  profiles: Map<string, ResolvedProfile>,
  trustedProfiles: readonly ResolvedProfile[],
): void {
  const pairOf = (profile: ResolvedProfile) =>
    `${profile.apiKeyEnv ?? ''} ${originOrEmpty(profile.baseUrl)}`;
  const trusted = new Set(trustedProfiles.filter((p) => p.apiKeyEnv).map(pairOf));
  for (const profile of profiles.values()) {
    if (profile.source === 'project' && profile.apiKeyEnv && !trusted.has(pairOf(profile))) {
      profile.isKeyEnvUntrusted = true;
    }
  }
}

function originOrEmpty(baseUrl: string): string {
  try {
    return keyOrigin(baseUrl);
  } catch {
    return '';
  }
}

/** The user's mode (default `auto`), unless the project asks for a stricter one: `required` > `auto` > `off`. */
function strictestSandbox(user: SandboxMode, project: SandboxMode | undefined): SandboxMode {
  if (!project) return user;
  return SANDBOX_MODES.indexOf(project) < SANDBOX_MODES.indexOf(user) ? project : user;
}

export function listNames(profiles: ReadonlyMap<string, unknown>): string {
  return profiles.size ? [...profiles.keys()].join(', ') : 'none';
}

/**
 * Every profile, those awaiting approval too: for what must know all of them (the secrets cut
 * out of answers), never for picking one to call.
 */
export function everyProfile(config: LoadedConfig): ResolvedProfile[] {
  return [...config.profiles.values(), ...(config.unapproved?.values() ?? [])];
}

/**
 * `readConfig` for a process that may not have the schemas (a task worker): loads them first
 * when a file changed since its server validated it.
 */
export async function readConfigLazily(
  ...args: Parameters<typeof readConfig>
): Promise<LoadedConfig> {
  try {
    return readConfig(...args);
  } catch (error) {
    if (!(error instanceof ConfigSchemasNotLoaded)) throw error;
    await loadConfigSchemas();
    return readConfig(...args);
  }
}
