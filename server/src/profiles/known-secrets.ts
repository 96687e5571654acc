import { readKeysAndSection } from './credentials.ts';
import type { Environment } from '../config/paths.ts';
import type { ResolvedProfile } from '../config/resolved-profile.ts';
import type { NamedSecret } from '../util/secret-finder.ts';

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
  return [...new Set(namedSecrets(dataHome, profiles, env).map((secret) => secret.value))];
}

/** The same secrets, each with words that say whose it is (for a result that names one). */
export function namedSecrets(
  dataHome: string,
  profiles: Iterable<ResolvedProfile>,
  env: Environment,
): NamedSecret[] {
  const secrets: NamedSecret[] = [];
  try {
    const stored = readKeysAndSection(dataHome, 'copilot');
    for (const [name, { key }] of Object.entries(stored.keys))
      secrets.push({ what: `the stored key of profile ${name}`, value: key });
    for (const token of copilotSecrets(stored.section))
      secrets.push({ what: 'a GitHub Copilot login', value: token });
  } catch {
    // An unreadable credentials file holds nothing this process could have sent.
  }
  for (const profile of profiles) {
    const value = profile.apiKeyEnv ? env[profile.apiKeyEnv]?.trim() : undefined;
    if (value)
      secrets.push({ what: `the key of profile ${profile.name} ($${profile.apiKeyEnv})`, value });
    for (const [name, header] of Object.entries(profile.headers ?? {})) {
      if (CREDENTIAL_HEADER.test(name)) {
        const value = header.replace(/^(bearer|basic)\s+/i, '');
        secrets.push({ what: `the ${name} header of profile ${profile.name}`, value });
      }
    }
  }
  return secrets;
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
