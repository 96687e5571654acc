import { readCredentials, readCredentialsSection } from './credentials.ts';
import type { Environment } from '../config/paths.ts';
import type { ResolvedProfile } from '../config/resolved-profile.ts';

/** Header names whose values are credentials (as in http-stream's error redaction). */
const CREDENTIAL_HEADER = /auth|key|token|secret|cookie|-vk$/i;

/**
 * Every key this machine could send: the stored keys, the GitHub logins and Copilot API tokens
 * beside them, the values of the variables that profiles name, and credential headers of
 * profiles. Whatever an endpoint sends back is cleaned of all of them, not only of the key
 * sent with that request: a gateway may echo an upstream key, and a text may travel further.
 */
export function knownSecrets(
  dataHome: string,
  profiles: Iterable<ResolvedProfile>,
  env: Environment,
): string[] {
  const secrets = new Set<string>();
  try {
    for (const stored of Object.values(readCredentials(dataHome).keys)) secrets.add(stored.key);
    for (const token of copilotSecrets(readCredentialsSection(dataHome, 'copilot')))
      secrets.add(token);
  } catch {
    // An unreadable credentials file holds nothing this process could have sent.
  }
  for (const profile of profiles) {
    const value = profile.apiKeyEnv ? env[profile.apiKeyEnv]?.trim() : undefined;
    if (value) secrets.add(value);
    for (const [name, header] of Object.entries(profile.headers ?? {})) {
      if (CREDENTIAL_HEADER.test(name)) secrets.add(header.replace(/^(bearer|basic)\s+/i, ''));
    }
  }
  return [...secrets];
}

/** `logins.*.githubToken` and `tokens.*.token` of the copilot section (see copilot-store.ts). */
function copilotSecrets(section: unknown): string[] {
  const { logins, tokens } = (section ?? {}) as { logins?: unknown; tokens?: unknown };
  const values = (part: unknown, field: string) =>
    Object.values(part && typeof part === 'object' ? part : {}).flatMap((entry: unknown) => {
      const value = (entry as Record<string, unknown> | null)?.[field];
      return typeof value === 'string' ? [value] : [];
    });
  return [...values(logins, 'githubToken'), ...values(tokens, 'token')];
}
