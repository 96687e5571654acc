/** The zod schemas of the config files; the names and rules they use are in `config-rules.ts`. */
import { z } from 'zod';
import { COPILOT_API_URL } from './copilot-endpoints.ts';
import { GUARDED_OUTPUTS } from './read-settings.ts';
import {
  ALL_FORMATS,
  ATTEMPT_STRATEGIES,
  AUTO_PROFILE,
  HOST_PATTERN,
  isCliFormat,
  PROFILE_NAME,
  PROFILE_NAME_RULE,
  SANDBOX_MODES,
} from './config-rules.ts';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const httpUrl = z
  .string({ error: 'must be a URL string such as "http://127.0.0.1:11434/v1"' })
  .refine((value) => /^https?:\/\/[^/\s]+/i.test(value) && URL.canParse(value), {
    error: 'must be an http(s) URL such as "http://127.0.0.1:11434/v1"',
  });

const usdPerMTok = z.number({ error: 'must be USD per million tokens, e.g. 0.6' }).nonnegative();
const priceSchema = z.strictObject({
  inputPerMTok: usdPerMTok,
  outputPerMTok: usdPerMTok,
  cachedInputPerMTok: usdPerMTok.optional(),
  cacheWritePerMTok: usdPerMTok.optional(),
});

/** One named worker's fields; `profileSchema` adds the rules across them. */
const profileFields = z.strictObject({
  format: z.enum(ALL_FORMATS, {
    error: `must be one of ${ALL_FORMATS.map((f) => `"${f}"`).join(', ')}`,
  }),
  /** Required but for `copilot` (see `copilotDefaults`); '' stands for "not given". */
  baseUrl: httpUrl.default(''),
  model: z.string({ error: 'must be the model name the endpoint serves' }).min(1, {
    error: 'must be the model name the endpoint serves',
  }),
  apiKeyEnv: z
    .string()
    .regex(ENV_NAME, { error: 'must be the NAME of an environment variable, not the key itself' })
    .optional(),
  use: z.string({ error: 'must be a one-line description of what this worker is for' }).optional(),
  local: z.boolean({ error: 'must be true or false' }).optional(),
  headers: z
    .record(z.string(), z.string(), { error: 'must map header names to strings' })
    .optional(),
  maxOutputTokens: z.int({ error: 'must be a whole number of tokens' }).positive().optional(),
  idleTimeoutS: z
    .number({ error: 'must be a number of seconds, e.g. 300' })
    .positive()
    .max(86_400, { error: 'must be at most 86400 (a day)' })
    .optional(),
  maxInputKb: z.int({ error: 'must be a whole number of KB' }).positive().optional(),
  pool: z
    .int({ error: 'must be the number of calls this worker may run at once' })
    .positive()
    .optional(),
  poolKey: z.string({ error: 'must name the pool shared with other profiles' }).min(1).optional(),
  failover: z
    .array(z.string(), { error: 'must list profile names to try, in order, e.g. ["code"]' })
    .optional(),
  price: priceSchema.optional(),
  promptCache: z.boolean({ error: 'must be true or false' }).optional(),
  reasoning: z
    .enum(['auto', 'always', 'never'], {
      error: 'must be "auto", "always" or "never" (replay of reasoning)',
    })
    .optional(),
  /** codex-cli's sandbox (gemini-cli: `danger-full-access` = approval mode yolo); only explicit. */
  sandboxMode: z
    .enum(['read-only', 'workspace-write', 'danger-full-access'], {
      error:
        'must be "read-only", "workspace-write" or "danger-full-access" (codex-cli, gemini-cli)',
    })
    .optional(),
  effort: z
    .enum(['low', 'medium', 'high'], { error: 'must be "low", "medium" or "high" (CLI engines)' })
    .optional(),
  allowHosts: z
    .array(
      z.string().regex(HOST_PATTERN, {
        error: 'must be a host such as "api.example.com", "*.example.com" or "example.com:443"',
      }),
      { error: 'must list the hosts task commands may reach, e.g. ["registry.example.com"]' },
    )
    .optional(),
});

/** One named worker. Field names are the contract of `config.json` (camelCase). */
export const profileSchema = profileFields
  .superRefine((profile, context) => {
    const issue = (field: string, message: string) =>
      context.addIssue({ code: 'custom', path: [field], message });
    // A CLI engine without baseUrl uses the CLI's own login and endpoint.
    if (isCliFormat(profile.format)) return;
    if (profile.format !== 'copilot') {
      if (profile.baseUrl === '') {
        const message = 'must be an http(s) URL such as "http://127.0.0.1:11434/v1"';
        context.addIssue({
          code: 'invalid_type',
          expected: 'string',
          input: undefined,
          path: ['baseUrl'],
          message,
        });
      }
      return;
    }
    if (profile.local) issue('local', 'must not be true: a copilot profile calls GitHub');
    if (profile.apiKeyEnv) {
      issue('apiKeyEnv', 'is not used by copilot: log in with provider_key (GitHub device flow)');
    }
  })
  .overwrite(copilotDefaults);
export type Profile = z.infer<typeof profileSchema>;

/**
 * A copilot profile calls the Copilot API unless it names another endpoint, and costs nothing
 * per token unless it sets a price: the subscription pays for it.
 */
function copilotDefaults<T extends { format: string; baseUrl: string; price?: unknown }>(
  profile: T,
): T {
  if (profile.format !== 'copilot') return profile;
  return {
    ...profile,
    baseUrl: profile.baseUrl || COPILOT_API_URL,
    price: profile.price ?? { inputPerMTok: 0, outputPerMTok: 0, cachedInputPerMTok: 0 },
  };
}

/** The large-read guard (hooks). Mirrored leniently, without zod, in `read-settings.ts`. */
export const largeReadSchema = z.strictObject({
  thresholdKb: z.number({ error: 'must be a number of KB, e.g. 16' }).positive().optional(),
  mode: z.enum(['deny', 'ask', 'off'], { error: 'must be "deny", "ask" or "off"' }).optional(),
  digest: z
    .boolean({ error: 'must be true or false (big real outputs become digests)' })
    .optional(),
  toolThresholdKb: z
    .strictObject(
      Object.fromEntries(
        GUARDED_OUTPUTS.map((kind) => [
          kind,
          z
            .number({ error: 'must be a number of KB (0: never digest this tool)' })
            .min(0)
            .optional(),
        ]),
      ),
    )
    .optional(),
  allowCommands: z
    .array(z.string().min(1), { error: 'must be a list of command prefixes, e.g. ["git diff"]' })
    .optional(),
});

/** A runner's ssh host: a name or an IP literal, never something ssh would read as an option. */
const SSH_HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\]|[0-9A-Fa-f:]+)$/;
const absolutePath = (what: string) =>
  z
    .string({ error: `must be ${what}` })
    .refine((value) => /^(?:\/|~\/)/.test(value) && !/[\0\n]/.test(value), {
      error: `must be ${what} (absolute, or starting with ~/)`,
    });

/** A machine tasks can run their commands on (`runners.<name>`); only the user's config may define one. */
export const runnerSchema = z.strictObject({
  type: z.literal('ssh', { error: 'must be "ssh" (the only kind of runner)' }),
  host: z
    .string()
    .regex(SSH_HOST, { error: 'must be a host name or IP address, e.g. "build-1.lan"' }),
  port: z.int({ error: 'must be a port number' }).min(1).max(65_535).optional(),
  user: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9._-]{0,63}$/, { error: 'must be a login name on the runner' })
    .optional(),
  identityFile: absolutePath('the path of an ssh private key').optional(),
  knownHostsFile: absolutePath('the path of a known_hosts file').optional(),
  workdir: z
    .string({ error: 'must be an absolute directory on the runner, e.g. "/srv/delegate"' })
    .regex(/^\/[^\0\n]*$/, {
      error: 'must be an absolute directory on the runner, e.g. "/srv/delegate"',
    }),
  maxTasks: z
    .int({ error: 'must be the number of tasks the runner takes at once' })
    .positive()
    .optional(),
});
export type RunnerConfig = z.infer<typeof runnerSchema>;

/** A Claude Code subagent type as the Agent tool names it: `Explore`, `general-purpose`, `my-agent`, `plugin:agent`. */
const SUBAGENT_TYPE = /^[A-Za-z0-9][A-Za-z0-9:_.-]{0,99}$/;

export const configSchema = z.strictObject({
  $schema: z.string().optional(),
  defaultProfile: z.string({ error: 'must be the name of a profile' }).optional(),
  profiles: z
    .record(
      // zod drops a "__proto__" key here, so such a profile is simply not there.
      z
        .string()
        .regex(PROFILE_NAME)
        .refine((name) => name !== AUTO_PROFILE),
      profileSchema,
      {
        error: (issue) =>
          issue.code === 'invalid_key'
            ? `is not a valid profile name: profile names use ${PROFILE_NAME_RULE}, and "auto" is reserved (it asks delegate to choose); rename it`
            : undefined,
      },
    )
    .optional(),
  largeRead: largeReadSchema.optional(),
  runners: z
    .record(z.string().regex(PROFILE_NAME), runnerSchema, {
      error: (issue) =>
        issue.code === 'invalid_key'
          ? `is not a valid runner name: use ${PROFILE_NAME_RULE}`
          : undefined,
    })
    .optional(),
  subagents: z
    .record(
      z.string().regex(SUBAGENT_TYPE),
      z.string({ error: 'must be the name of a profile' }).min(1),
      {
        error: (issue) =>
          issue.code === 'invalid_key'
            ? 'must map Claude Code subagent types (e.g. "Explore") to profile names'
            : undefined,
      },
    )
    .optional(),
  autoProfiles: z
    .array(z.string({ error: 'must be the name of a profile' }).min(1), {
      error: 'must list the profiles "auto" may choose from, e.g. ["local", "deepseek"]',
    })
    .min(1)
    .optional(),
  sandbox: z
    .enum(SANDBOX_MODES, {
      error: 'must be "required", "auto" or "off" (OS sandbox of task commands)',
    })
    .optional(),
  tasks: z
    .strictObject({
      fixRounds: z
        .int({ error: 'must be a whole number of rounds, e.g. 2' })
        .min(0)
        .max(10, { error: 'must be at most 10' })
        .optional(),
      reviewProfile: z.string({ error: 'must be the name of a profile' }).min(1).optional(),
      attemptProfiles: z
        .array(z.string({ error: 'must be the name of a profile' }).min(1))
        .min(1)
        .max(5, { error: 'must name at most 5 profiles (one per attempt)' })
        .optional(),
      attemptStrategy: z
        .enum(ATTEMPT_STRATEGIES, { error: 'must be "first_pass" or "best_review"' })
        .optional(),
      escalate: z
        .array(z.string({ error: 'must be the name of a profile' }).min(1), {
          error: 'must list profiles to climb, cheapest first, e.g. ["local", "cheap", "strong"]',
        })
        .min(2, { error: 'must name at least 2 profiles (a ladder of one is just a profile)' })
        .max(5, { error: 'must name at most 5 profiles' })
        .optional(),
      maxProcesses: z
        .int({ error: 'must be a whole number of processes, e.g. 1024' })
        .min(16, { error: 'must be at least 16' })
        .max(1_000_000)
        .optional(),
      maxMemoryMb: z
        .int({ error: 'must be a whole number of MB, e.g. 8192' })
        .min(64, { error: 'must be at least 64' })
        .optional(),
    })
    .optional(),
  /** Endpoints the user approved for a project file's own profiles (see project-approvals.ts). */
  projectApprovals: z
    .record(
      z.string(),
      z.array(
        z.strictObject({
          format: z.enum(ALL_FORMATS, {
            error: `must be one of ${ALL_FORMATS.map((f) => `"${f}"`).join(', ')}`,
          }),
          baseUrl: z.string({ error: 'must be the approved base URL ("" for a CLI)' }),
        }),
        { error: 'must list the approved endpoints ({"format", "baseUrl"})' },
      ),
      { error: 'must map project files to the endpoints approved for them' },
    )
    .optional(),
  budget: z
    .strictObject({
      dailyUsd: z.number({ error: 'must be a number of USD, e.g. 5' }).positive().optional(),
      perTaskUsd: z.number({ error: 'must be a number of USD, e.g. 1' }).positive().optional(),
    })
    .optional(),
});
export type ConfigFile = z.infer<typeof configSchema>;
