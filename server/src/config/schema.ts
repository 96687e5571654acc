import { z } from 'zod';

/** Wire formats this version can call. Later engines (CLI workers, Copilot) extend this list. */
export const PROFILE_FORMATS = ['openai', 'anthropic'] as const;
export type ProfileFormat = (typeof PROFILE_FORMATS)[number];

const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
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
});

/** One named worker. Field names are the contract of `config.json` (camelCase). */
export const profileSchema = z.strictObject({
  format: z.enum(PROFILE_FORMATS, {
    error: `must be one of ${PROFILE_FORMATS.map((f) => `"${f}"`).join(', ')}`,
  }),
  baseUrl: httpUrl,
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
});
export type Profile = z.infer<typeof profileSchema>;

/** The large-read guard (hooks). Mirrored leniently, without zod, in `read-settings.ts`. */
export const largeReadSchema = z.strictObject({
  thresholdKb: z.number({ error: 'must be a number of KB, e.g. 50' }).positive().optional(),
  mode: z.enum(['deny', 'ask', 'off'], { error: 'must be "deny", "ask" or "off"' }).optional(),
});

export const configSchema = z.strictObject({
  $schema: z.string().optional(),
  defaultProfile: z.string({ error: 'must be the name of a profile' }).optional(),
  profiles: z
    .record(
      z.string().regex(PROFILE_NAME, {
        error: 'profile names use letters, digits, "-", "_" or "." (at most 64)',
      }),
      profileSchema,
    )
    .optional(),
  largeRead: largeReadSchema.optional(),
  budget: z
    .strictObject({
      dailyUsd: z.number({ error: 'must be a number of USD, e.g. 5' }).positive().optional(),
      perTaskUsd: z.number({ error: 'must be a number of USD, e.g. 1' }).positive().optional(),
    })
    .optional(),
});
export type ConfigFile = z.infer<typeof configSchema>;
