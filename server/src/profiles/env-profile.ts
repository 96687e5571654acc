import { UserError } from '../util/user-error.ts';
import type { Environment } from '../config/paths.ts';
import type { ResolvedProfile } from '../config/resolved-profile.ts';
import { validEnvProfile } from './config-validation.ts';

export const ENV_PROFILE_NAME = 'env';

/** The environment-only profile: `DELEGATE_BASE_URL`, `DELEGATE_FORMAT`, `DELEGATE_MODEL`, `DELEGATE_API_KEY_ENV`. */
export function readEnvProfile(env: Environment, dataHome: string): ResolvedProfile | undefined {
  const baseUrl = env.DELEGATE_BASE_URL?.trim();
  const model = env.DELEGATE_MODEL?.trim();
  if (!baseUrl && !model) return undefined;
  const candidate = {
    format: env.DELEGATE_FORMAT?.trim() || 'openai',
    baseUrl,
    model,
    ...(env.DELEGATE_API_KEY_ENV?.trim() ? { apiKeyEnv: env.DELEGATE_API_KEY_ENV.trim() } : {}),
  };
  const parsed = validEnvProfile(candidate);
  if (!parsed.success) {
    const variables: Record<string, string> = {
      format: 'DELEGATE_FORMAT',
      baseUrl: 'DELEGATE_BASE_URL',
      model: 'DELEGATE_MODEL',
      apiKeyEnv: 'DELEGATE_API_KEY_ENV',
    };
    const lines = parsed.issues.map((issue) => {
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
    origin: `environment (${ENV_VARIABLES.filter((name) => env[name]?.trim()).join(', ')})`,
    dataHome,
  };
}

export const ENV_VARIABLES = [
  'DELEGATE_FORMAT',
  'DELEGATE_BASE_URL',
  'DELEGATE_MODEL',
  'DELEGATE_API_KEY_ENV',
] as const;

/** Whether the URL's host is this machine (a name other than `localhost` is not resolved here). */
export function isLoopbackUrl(url: string): boolean {
  const host = new URL(url).hostname;
  return host === 'localhost' || host === '[::1]' || /^127\./.test(host);
}
