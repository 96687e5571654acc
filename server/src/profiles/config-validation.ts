/**
 * Validation of the config files and of the environment profile, with the zod schemas loaded
 * only when a validation needs them. `config/schema.ts` builds every schema as it loads: with
 * zod, about 3 MB of a waiting task worker's memory (`npm run bench -- workermemory`). The
 * server and the CLI load it with `load-config.ts`; a task worker, which spends its life
 * waiting on its model, does not. What its server already validated comes with the word to go
 * (`rememberValidations`), keyed by the exact text validated, so a worker loads the schemas
 * only when a file changed since (`loadConfigSchemas`, through `readConfigLazily`).
 */
import type { z } from 'zod';
import type { ConfigFile, Profile, configSchema, profileSchema } from '../config/schema.ts';
import { UserError } from '../util/user-error.ts';

export interface ConfigSchemas {
  configSchema: typeof configSchema;
  profileSchema: typeof profileSchema;
}

let schemas: ConfigSchemas | undefined;

/** Thrown by a validation that needs the schemas before any were loaded in this process. */
export class ConfigSchemasNotLoaded extends Error {
  constructor() {
    super(
      'the config schemas are not loaded: load them (loadConfigSchemas) and read the config again',
    );
  }
}

/** The schemas every validation from now on uses (load-config.ts gives them as it loads). */
export function useConfigSchemas(loaded: ConfigSchemas): void {
  schemas = loaded;
}

export async function loadConfigSchemas(): Promise<void> {
  if (schemas) return;
  const { configSchema, profileSchema } = await import('../config/schema.ts');
  schemas = { configSchema, profileSchema };
}

/** The last valid input of each thing validated (a config file, the environment profile). */
interface Validation {
  input: string;
  value: unknown;
}

/**
 * A pure memo: the same input validates the same way, so a task worker's every model call does
 * not run the schema again, and a worker need not load it for what its server validated. A
 * changed input is validated as before. One entry per file: it holds the file's last text.
 */
const validations = new Map<string, Validation>();

function remembered(name: string, input: string): unknown {
  const known = validations.get(name);
  return known?.input === input ? structuredClone(known.value) : undefined;
}

function remember(name: string, input: string, value: unknown): void {
  validations.set(name, { input, value: structuredClone(value) });
}

/** What this process has validated: for a worker it starts, which then need not do it again. */
export function validationsSoFar(): Array<[string, Validation]> {
  return [...validations];
}

/** Takes what a server validated (from `validationsSoFar`); anything not of that shape is ignored. */
export function rememberValidations(entries: unknown): void {
  if (!Array.isArray(entries)) return;
  for (const entry of entries as unknown[]) {
    if (!Array.isArray(entry) || typeof entry[0] !== 'string') continue;
    const validation = entry[1] as Partial<Validation> | null;
    if (typeof validation?.input !== 'string' || validation.value === undefined) continue;
    validations.set(entry[0], { input: validation.input, value: validation.value });
  }
}

function loadedSchemas(): ConfigSchemas {
  if (!schemas) throw new ConfigSchemasNotLoaded();
  return schemas;
}

/**
 * The content of a config file, validated: `text` is the file's exact text (undefined for a
 * content that is not a file's, as provider_set checks a change before writing it).
 */
export function validConfig(file: string, text: string | undefined, json: unknown): ConfigFile {
  const name = `config ${file}`;
  const known = text === undefined ? undefined : remembered(name, text);
  if (known !== undefined) return known as ConfigFile;
  const parsed = loadedSchemas().configSchema.safeParse(json);
  if (!parsed.success) {
    throw new UserError(
      `Invalid config in ${file}:\n${formatIssues(parsed.error.issues)}\n` +
        'Fix these fields and call again; changes take effect at the next call.',
    );
  }
  if (text !== undefined) remember(name, text, parsed.data);
  return parsed.data;
}

export type ProfileValidation =
  { success: true; data: Profile } | { success: false; issues: readonly z.core.$ZodIssue[] };

/** The environment profile's fields (from DELEGATE_* variables), validated as a profile. */
export function validEnvProfile(candidate: Record<string, unknown>): ProfileValidation {
  const name = 'environment profile';
  const input = JSON.stringify(candidate);
  const known = remembered(name, input);
  if (known !== undefined) return { success: true, data: known as Profile };
  const parsed = loadedSchemas().profileSchema.safeParse(candidate);
  if (!parsed.success) return { success: false, issues: parsed.error.issues };
  remember(name, input, parsed.data);
  return { success: true, data: parsed.data };
}

export function formatIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((issue) => {
      const field = issue.path.map(String).join('.') || '(top level)';
      if (issue.code === 'unrecognized_keys') {
        return `- ${field}: unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys
          .map((key) => `"${key}"`)
          .join(', ')} (check the spelling; this version does not support it)`;
      }
      const missing = issue.code === 'invalid_type' && issue.input === undefined;
      return `- ${field}: ${missing ? 'is required; it ' : ''}${issue.message}`;
    })
    .join('\n');
}
