/**
 * The config's names and rules that need no schema: formats, profile names, the sandbox's modes
 * and host patterns, attempt strategies. Kept apart from `schema.ts` so that the many modules
 * needing only these (the server's start among them) do not build the config's zod schemas, which
 * cost a start milliseconds and a task worker memory.
 */
/** Wire formats this version can call (each has an adapter under providers/). */
export const PROFILE_FORMATS = ['openai', 'anthropic', 'copilot'] as const;
export type ApiFormat = (typeof PROFILE_FORMATS)[number];
/** Formats whose worker is a vendor's CLI, run as a task engine (server/src/tasks/engines/). */
export const CLI_FORMATS = ['claude-cli', 'codex-cli', 'gemini-cli'] as const;
export type CliFormat = (typeof CLI_FORMATS)[number];
export type ProfileFormat = ApiFormat | CliFormat;
export const isCliFormat = (format: string): format is CliFormat =>
  (CLI_FORMATS as readonly string[]).includes(format);
export const ALL_FORMATS = [...PROFILE_FORMATS, ...CLI_FORMATS] as const;

/** Profile names: letters, digits, "-" and "_", 1 to 64 characters. */
export const PROFILE_NAME = /^[A-Za-z0-9_-]{1,64}$/;
export const PROFILE_NAME_RULE = 'letters, digits, "-" and "_" only, 1 to 64 characters';
/** Matches the rule, but a parsed JSON object does not keep it as a key: never a new profile. */
export const RESERVED_PROFILE_NAME = '__proto__';
/** Not a profile: `profile: "auto"` asks delegate to choose one (calls/choose-profile.ts). */
export const AUTO_PROFILE = 'auto';

/**
 * Why `name` (given as `argument`) cannot be a profile name, or undefined when it can. Names
 * are looked up in prototype-free maps, so "constructor" or "__proto__" are ordinary names.
 */
export function profileNameProblem(
  name: string,
  argument: string,
  options: { isNew?: boolean } = {},
): string | undefined {
  if (!PROFILE_NAME.test(name)) {
    return `${argument}: ${JSON.stringify(name)} is not a valid profile name (${PROFILE_NAME_RULE}). Call providers to see the profiles.`;
  }
  if (options.isNew && name === RESERVED_PROFILE_NAME) {
    return `${argument}: "${name}" is reserved (JavaScript gives it a special meaning in objects); choose another name.`;
  }
  if (options.isNew && name === AUTO_PROFILE) {
    return `${argument}: "auto" is reserved (it asks delegate to choose a profile); choose another name.`;
  }
  return undefined;
}

/** A sandbox allowlist entry: a name (optionally `*.`), an IPv4 or bracketed IPv6 literal, optional `:port`. */
export const HOST_PATTERN =
  /^(?:(?:\*\.)?[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * How a task with several attempts picks its winner: the first attempt whose tests pass (and
 * whose review passes, with a definition of done), or every attempt ends and the best ranked wins.
 */
export const ATTEMPT_STRATEGIES = ['first_pass', 'best_review'] as const;
export type AttemptStrategy = (typeof ATTEMPT_STRATEGIES)[number];

/** The task worker's OS sandbox: `required` refuses tasks without it, `auto` runs them unsandboxed and says so. */
export const SANDBOX_MODES = ['required', 'auto', 'off'] as const;
export type SandboxMode = (typeof SANDBOX_MODES)[number];
