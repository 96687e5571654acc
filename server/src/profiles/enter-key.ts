import { withFileLock } from '../util/file-lock.ts';
import { UserError } from '../util/user-error.ts';
import { TOOL_WORDING } from '../util/wording.ts';
import { checkKeyInput, keyOrigin, saveKey } from './credentials.ts';
import { listNames, loadConfig } from './load-config.ts';
import { approved, findProfile } from './resolve-profile.ts';
import { credentialsPath, settingsLockPath, type Environment } from '../config/paths.ts';
import type { ResolvedProfile } from '../config/resolved-profile.ts';

/** Where a key is being entered for: the profile and the origin it will be bound to. */
export interface KeyTarget {
  profile: ResolvedProfile;
  origin: string;
}

/** The profile a key is for; it must exist (in any config layer or the environment). */
export function keyTarget(
  dataHome: string,
  projectDir: string,
  env: Environment,
  name: string,
  wording = TOOL_WORDING,
): KeyTarget {
  const config = loadConfig(dataHome, projectDir, env);
  // A key is entered only for a profile a call may use: a project's own one is approved first.
  const found = findProfile(config, name);
  const profile = found && approved(found);
  if (!profile) {
    throw new UserError(
      `Unknown profile "${name}" (profiles: ${listNames(config.profiles)}). Create it first with ${wording.setProfile}.`,
    );
  }
  return { profile, origin: keyOrigin(profile.baseUrl) };
}

/** What the user reads before typing the key: which profile, which host, where it is kept. */
export function keyPromptText(target: KeyTarget, dataHome: string): string {
  return (
    `API key for the delegate profile "${target.profile.name}" (${target.profile.model}). It will be sent only to ` +
    `${target.origin}, stored in ${credentialsPath(dataHome)} (mode 0600), and never shown to the model.`
  );
}

/** Stores what the user entered; the result names the profile and host, never the key. */
export async function storeEnteredKey(
  dataHome: string,
  target: KeyTarget,
  input: string,
  now: Date,
): Promise<string> {
  const key = checkKeyInput(input);
  const saved = await withFileLock(settingsLockPath(dataHome), () =>
    Promise.resolve(saveKey(dataHome, target.profile.name, key, target.origin, now)),
  );
  const lines = [
    `Stored the key for profile "${target.profile.name}" in ${credentialsPath(dataHome)} (mode 0600); it is sent only to ${target.origin} and takes effect at the next call.`,
  ];
  if (target.profile.apiKeyEnv) {
    lines.push(`It is used instead of $${target.profile.apiKeyEnv}.`);
  }
  if (saved.repaired) lines.push(saved.repaired);
  return lines.join('\n');
}

/** When the client cannot show a form: the two ways the user can give the key without the model. */
export function noFormText(name: string, cliPath: string): string {
  const variable = `${name.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}_API_KEY`;
  return (
    `This client cannot ask the user for input (no MCP elicitation), and keys never pass through you. Ask the user to either ` +
    `run \`${cliPath} provider-key ${name}\` in a terminal (it reads the key without echo), or export the key ` +
    `as an environment variable (e.g. ${variable}) before starting Claude Code and then call provider_set ` +
    `{"name": "${name}", "api_key_env": "${variable}"}.`
  );
}
