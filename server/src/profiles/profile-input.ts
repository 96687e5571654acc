import type { z } from 'zod';
import { profileSchema } from '../config/schema.ts';
import { UserError } from '../util/user-error.ts';

/**
 * provider_set's arguments are snake_case; config.json is camelCase. This maps one to the
 * other, refuses fields the tool does not have and anything that looks like a credential:
 * keys enter only through provider_key, never through the model.
 */

/** Tool argument → config field, where the mechanical snake→camel rule does not give it. */
const PRICE_FIELDS: Record<string, string> = {
  input_per_mtok: 'inputPerMTok',
  output_per_mtok: 'outputPerMTok',
  cached_input_per_mtok: 'cachedInputPerMTok',
  cache_write_per_mtok: 'cacheWritePerMTok',
};

export const toCamel = (name: string) =>
  name.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());
export const toSnake = (name: string) =>
  PRICE_SNAKE[name] ?? name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
const PRICE_SNAKE = Object.fromEntries(Object.entries(PRICE_FIELDS).map(([s, c]) => [c, s]));

/** Every profile field under its snake_case argument name. */
export const profileArguments = (): string[] => Object.keys(profileSchema.shape).map(toSnake);

/** Header names that carry credentials: a key in config.json would reach the model's view of it. */
const CREDENTIAL_HEADERS =
  /^(authorization|proxy-authorization|cookie|x-api-key|api-key|x-goog-api-key|x-bf-vk|x-litellm-api-key)$/i;
/** Shapes of well-known secrets (OpenAI/Anthropic/DeepSeek sk-, GitHub, GitLab, Slack, AWS, Google, HF, JWT). */
const SECRET_SHAPES =
  /(sk-[A-Za-z0-9_-]{12,}|sk_[A-Za-z0-9]{12,}|gh[pousr]_[A-Za-z0-9]{16,}|github_pat_|glpat-|xox[abprs]-|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{20,}|hf_[A-Za-z]{20,}|eyJ[A-Za-z0-9_-]{10,}\.eyJ)/;
/** An opaque token: long, no spaces, letters and digits mixed. */
const OPAQUE_TOKEN = /^(?=.*[0-9])(?=.*[A-Za-z])[A-Za-z0-9._~+/=-]{32,}$/;

const NO_KEYS =
  'Keys are never tool arguments: call provider_key so the user enters the key, or name the variable that holds it in api_key_env.';

/** The profile fields given, camelCase; refuses unknown arguments and key-like values. */
export function profilePatch(input: Record<string, unknown>, known: ReadonlySet<string>) {
  const patch: Record<string, unknown> = {};
  for (const [argument, value] of Object.entries(input)) {
    if (argument === 'name' || argument === 'default' || value === undefined) continue;
    if (!known.has(argument)) {
      const keyish = /key|token|secret|password/i.test(argument);
      const hint = keyish
        ? NO_KEYS
        : `Its fields: name, ${[...known].join(', ')}, default (snake_case).`;
      throw new UserError(`provider_set has no field "${argument}". ${hint}`);
    }
    refuseSecrets(argument, value);
    patch[toCamel(argument)] = argument === 'price' ? camelPrice(value) : value;
  }
  return patch;
}

function camelPrice(value: unknown): unknown {
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([name, amount]) => [PRICE_FIELDS[name] ?? name, amount]),
  );
}

function refuseSecrets(argument: string, value: unknown): void {
  const refuse = (why: string) => {
    throw new UserError(`${argument}: ${why}; nothing was saved. ${NO_KEYS}`);
  };
  if (argument === 'headers' && value && typeof value === 'object') {
    for (const [name, text] of Object.entries(value as Record<string, unknown>)) {
      if (CREDENTIAL_HEADERS.test(name)) refuse(`"${name}" carries a credential`);
      if (typeof text === 'string' && (SECRET_SHAPES.test(text) || OPAQUE_TOKEN.test(text))) {
        refuse(`the value of "${name}" looks like a key`);
      }
    }
    return;
  }
  if (argument === 'base_url' && typeof value === 'string' && URL.canParse(value)) {
    const url = new URL(value);
    if (url.username || url.password) refuse('a URL must not carry a user name or password');
    for (const name of url.searchParams.keys()) {
      if (/key|token|secret|sig|password/i.test(name))
        refuse(`the query parameter "${name}" looks like a credential`);
    }
  }
  const texts = JSON.stringify(value);
  if (SECRET_SHAPES.test(texts)) refuse('the value looks like a key');
}

/** zod issues of a profile, named by their tool argument (`base_url`, `price.input_per_mtok`). */
export function formatProfileIssues(
  issues: readonly z.core.$ZodIssue[],
  given: Record<string, unknown>,
): string {
  const valueAt = (path: readonly PropertyKey[]) =>
    path.reduce<unknown>(
      (value, part) => (value as Record<PropertyKey, unknown> | undefined)?.[part],
      given,
    );
  return issues
    .map((issue) => {
      const field = issue.path.map((part) => toSnake(String(part))).join('.') || 'profile';
      if (issue.code === 'unrecognized_keys') {
        return `- ${field}: unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((key) => `"${toSnake(key)}"`).join(', ')}`;
      }
      const missing = issue.code === 'invalid_type' && valueAt(issue.path) === undefined;
      return `- ${field}: ${missing ? 'is required for a new profile; it ' : ''}${issue.message}`;
    })
    .join('\n');
}
