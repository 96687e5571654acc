import { z } from 'zod';

import { CLI_FORMATS, PROFILE_FORMATS } from '../config/config-rules.ts';
import { SETS_LOCAL_FILES } from './annotations.ts';
import { defineTool, lazily } from './define-tool.ts';

/**
 * The fields the schema shows, tersely (tools/list has a size budget). Every other profile
 * field is accepted too under its snake_case name (see the handler); the profile schema validates
 * all of them, with messages naming these fields.
 */
const fields = lazily(() => ({
  format: z
    .enum([...PROFILE_FORMATS, ...CLI_FORMATS])
    .optional()
    .describe('Format.'),
  base_url: z.string().optional().describe('openai: …/v1; anthropic: host root.'),
  model: z.string().optional().describe('Model id.'),
  api_key_env: z.string().optional().describe('NAME of the key variable.'),
  use: z.string().optional().describe('What it is for.'),
}));

export const providerSetTool = defineTool({
  name: 'provider_set',
  title: 'Save a profile',
  description:
    'Adds or updates a profile in the user config (effective next call); new ones need format, model, ' +
    'base_url (but a CLI). Any other profile field works too, in snake_case. No keys (see provider_key).',
  inputSchema: () => ({
    name: z.string().describe('Profile name.'),
    ...fields(),
    default: z.boolean().optional().describe('Make default.'),
  }),
  shouldSeeUnknownArguments: true,
  annotations: SETS_LOCAL_FILES,
  handler: async (input, { context, services }) => {
    // The schema's fields plus every other profile field under its snake_case name.
    const known = new Set([...Object.keys(fields()), ...services.profileArguments()]);
    const patch = services.profilePatch(input, known);
    return services.setProfile(context, input.name, patch, input.default === true);
  },
});
