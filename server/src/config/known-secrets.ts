import type { ResolvedProfile } from './load-config.ts';
import { readCredentials } from './credentials.ts';
import type { Environment } from './paths.ts';

/** Shorter values are not keys, and cutting them would mangle ordinary text. */
const MIN_SECRET_CHARS = 8;

/**
 * Every key this machine could send: the stored keys and the values of the variables that
 * profiles name. An endpoint's error text is cleaned of all of them, not only of the key sent
 * with that request: a gateway may echo an upstream key, and a text may travel further.
 */
export function knownSecrets(
  dataHome: string,
  profiles: Iterable<ResolvedProfile>,
  env: Environment,
): string[] {
  const secrets = new Set<string>();
  try {
    for (const stored of Object.values(readCredentials(dataHome).keys)) secrets.add(stored.key);
  } catch {
    // An unreadable credentials file holds nothing this process could have sent.
  }
  for (const profile of profiles) {
    const value = profile.apiKeyEnv ? env[profile.apiKeyEnv] : undefined;
    if (value) secrets.add(value);
  }
  return [...secrets].filter((secret) => secret.length >= MIN_SECRET_CHARS);
}

export function withoutSecrets(text: string, secrets: readonly string[]): string {
  let clean = text;
  for (const secret of secrets) clean = clean.split(secret).join('[redacted]');
  return clean;
}
