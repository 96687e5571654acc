/**
 * The config for the server and the CLI: `readConfig` with the zod schemas loaded as this module
 * loads, so every validation can run at once. A task worker reads its config through
 * read-config.ts instead and loads the schemas only when it must (see config-validation.ts).
 */
import { configSchema, profileSchema } from '../config/schema.ts';
import { useConfigSchemas } from './config-validation.ts';
import { readConfig } from './read-config.ts';

useConfigSchemas({ configSchema, profileSchema });

export const loadConfig = readConfig;
export { everyProfile, listNames, type LoadedConfig } from './read-config.ts';
