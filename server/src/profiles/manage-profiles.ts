import { readFileSync } from 'node:fs';
import type { AppContext } from './app-context.ts';
import { withFileLock } from '../util/file-lock.ts';
import { checkEndpointUrl } from '../wire/endpoint-safety.ts';
import { writeFileAtomicSync } from '../util/atomic-write.ts';
import { UserError, errorMessage } from '../util/user-error.ts';
import {
  CredentialsError,
  keyOrigin,
  readCredentials,
  removeKey,
  type StoredKey,
} from './credentials.ts';
import { atJsonError, jsonErrorReason, parseJson } from '../util/read-json.ts';
import { ENV_PROFILE_NAME } from './env-profile.ts';
import { listNames, loadConfig, type LoadedConfig } from './load-config.ts';
import { configPath, settingsLockPath } from '../config/paths.ts';
import { describeAuth } from './profile-endpoint.ts';
import { findProfile } from './resolve-profile.ts';
import { formatProfileIssues } from './profile-input.ts';
import { profileSchema } from '../config/schema.ts';
import { profileNameProblem } from '../config/config-rules.ts';

type Json = Record<string, unknown>;

/**
 * Saves a profile to the user's config.json (never the project file): the given fields over
 * the existing profile of that name, validated like the file itself, then written atomically
 * with every other setting kept. A stored key whose host the profile no longer points at is
 * dropped. Returns what the supervisor should know.
 */
export async function setProfile(
  context: AppContext,
  name: string,
  patch: Json,
  makeDefault: boolean,
): Promise<string> {
  checkName(name, { isNew: true });
  return withFileLock(settingsLockPath(context.dataHome), () => {
    const file = configPath(context.dataHome);
    const json = readUserConfig(file);
    const profiles = profilesOf(json);
    const existing = Object.hasOwn(profiles, name) ? (profiles[name] as Json) : undefined;
    const merged = { ...existing, ...patch };
    const parsed = profileSchema.safeParse(merged);
    if (!parsed.success) {
      throw new UserError(
        `Profile "${name}" was not saved:\n${formatProfileIssues(parsed.error.issues, merged)}\nFix these fields and call again.`,
      );
    }
    // A CLI engine without base_url uses the CLI's own login and endpoint.
    const { baseUrl } = parsed.data;
    if (baseUrl) refuseUnsafeUrl(baseUrl);
    const next: Json = { ...json, profiles: { ...profiles, [name]: merged } };
    if (makeDefault) next.defaultProfile = name;
    const config = validated(context, next);
    writeFileAtomicSync(file, `${JSON.stringify(next, null, 2)}\n`);
    const dropped = baseUrl ? dropKeyForOtherHost(context.dataHome, name, baseUrl) : undefined;
    return Promise.resolve(savedText(context, config, name, { isNew: !existing, dropped }));
  });
}

/** Removes a profile from the user's config.json and forgets its stored key. */
export async function removeProfile(context: AppContext, name: string): Promise<string> {
  checkName(name);
  return withFileLock(settingsLockPath(context.dataHome), () => {
    const file = configPath(context.dataHome);
    const json = readUserConfig(file);
    const profiles = profilesOf(json);
    if (!Object.hasOwn(profiles, name)) {
      throw notInUserConfig(context, name, file, Object.keys(profiles));
    }
    delete profiles[name];
    const next: Json = { ...json, profiles: { ...profiles } };
    const wasDefault = next.defaultProfile === name;
    if (wasDefault) delete next.defaultProfile;
    validated(context, next);
    writeFileAtomicSync(file, `${JSON.stringify(next, null, 2)}\n`);
    const hadKey = hasStoredKey(context.dataHome, name) && removeKey(context.dataHome, name);
    const text = [
      `Removed profile "${name}" from ${file}${hadKey ? ' and its stored key' : ''}.`,
      wasDefault
        ? 'It was the default; no default is set now (provider_set with default: true sets one).'
        : '',
      stillDefined(context, name),
    ]
      .filter(Boolean)
      .join(' ');
    return Promise.resolve(text);
  });
}

function checkName(name: string, options: { isNew?: boolean } = {}): void {
  const problem = profileNameProblem(name, 'name', options);
  if (problem) throw new UserError(problem);
  if (options.isNew && name === ENV_PROFILE_NAME) {
    throw new UserError(
      'name: "env" is the environment-only profile (DELEGATE_BASE_URL, DELEGATE_MODEL, …); choose another name.',
    );
  }
}

function refuseUnsafeUrl(baseUrl: string): void {
  try {
    checkEndpointUrl(new URL(baseUrl));
  } catch (error) {
    throw new UserError(`base_url: ${errorMessage(error)} Nothing was saved.`);
  }
}

/** config.json as a JSON object (`{}` when missing); anything else is refused, never overwritten. */
export function readUserConfig(file: string): Json {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new UserError(`Cannot read ${file}: ${(error as Error).message}`);
  }
  let json: unknown;
  try {
    json = parseJson(text);
  } catch (error) {
    throw new UserError(
      `${atJsonError(file, text)}: not valid JSON (${jsonErrorReason(error)}), so it was left alone. Fix it by hand (or move it away) and call again.`,
    );
  }
  if (json && typeof json === 'object' && !Array.isArray(json)) return json as Json;
  throw new UserError(
    `${file} is not a valid JSON object, so it was left alone. Fix it by hand (or move it away) and call again.`,
  );
}

/** The whole configuration as it would load after the change (project file and environment included). */
function validated(context: AppContext, next: Json): LoadedConfig {
  try {
    return loadConfig(context.dataHome, context.projectDir, context.env, next);
  } catch (error) {
    throw new UserError(`Nothing was saved: ${errorMessage(error)}`);
  }
}

/**
 * The profiles of a config file as a prototype-free object: "constructor" or "toString" are
 * names like any other, never something every object has.
 */
function profilesOf(json: Json): Json {
  const profiles = json.profiles;
  const copy = Object.create(null) as Json;
  return profiles && typeof profiles === 'object' ? Object.assign(copy, profiles) : copy;
}

function hasStoredKey(dataHome: string, name: string): boolean {
  try {
    return Object.hasOwn(readCredentials(dataHome).keys, name);
  } catch (error) {
    // An unreadable credentials.json: the profile goes; its key, if any, cannot be found.
    if (error instanceof CredentialsError) return false;
    throw error;
  }
}

function dropKeyForOtherHost(dataHome: string, name: string, baseUrl: string): string | undefined {
  let stored: StoredKey | undefined;
  try {
    const { keys } = readCredentials(dataHome);
    stored = Object.hasOwn(keys, name) ? keys[name] : undefined;
  } catch (error) {
    // An unreadable credentials.json holds no key this profile could carry elsewhere.
    if (error instanceof CredentialsError) return undefined;
    throw error;
  }
  if (!stored || stored.origin === keyOrigin(baseUrl)) return undefined;
  removeKey(dataHome, name);
  return stored.origin;
}

function savedText(
  context: AppContext,
  config: LoadedConfig,
  name: string,
  { isNew, dropped }: { isNew: boolean; dropped: string | undefined },
): string {
  const profile = config.profiles.get(name);
  if (!profile) return `Saved profile "${name}".`;
  const lines = [
    `${isNew ? 'Added' : 'Updated'} profile "${name}" in ${config.configFile}: ${profile.format} · model ${profile.model} · ${profile.baseUrl || "the CLI's own login and endpoint"}. Takes effect at the next call.`,
  ];
  if (profile.source === 'project') {
    lines.push(`Note: ${profile.origin} also defines "${name}" and wins in this project.`);
  }
  if (dropped) {
    lines.push(
      `The key stored for ${dropped} was dropped: a key is only ever sent to the host it was entered for.`,
    );
  }
  const auth = describeAuth(profile, context.env);
  lines.push(`Key: ${auth}.`);
  if (auth === 'no key configured') {
    lines.push(
      `If it needs one, call provider_key {"profile": "${name}"} so the user can enter it.`,
    );
  }
  lines.push(
    config.defaultProfile === name
      ? 'It is the default profile.'
      : `Default: ${config.defaultProfile ?? 'none set'}.`,
  );
  return lines.join('\n');
}

function notInUserConfig(
  context: AppContext,
  name: string,
  file: string,
  names: string[],
): UserError {
  const config = loadConfig(context.dataHome, context.projectDir, context.env);
  const elsewhere = findProfile(config, name);
  const where =
    elsewhere?.source === 'project'
      ? ` It comes from ${elsewhere.origin}: edit that file.`
      : elsewhere?.source === 'env'
        ? ' It is the environment profile: unset DELEGATE_BASE_URL and DELEGATE_MODEL.'
        : '';
  return new UserError(
    `No profile "${name}" in ${file} (it has: ${names.length ? names.join(', ') : 'none'}).${where}`,
  );
}

function stillDefined(context: AppContext, name: string): string {
  const config = loadConfig(context.dataHome, context.projectDir, context.env);
  const profile = findProfile(config, name);
  if (!profile) return `Profiles now: ${listNames(config.profiles)}.`;
  return `"${name}" is still defined by ${profile.origin}.`;
}
