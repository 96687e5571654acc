import { z } from 'zod';

import { toSnake } from '../profiles/profile-input.ts';
import { PROFILE_FORMATS, profileSchema } from '../config/schema.ts';
import { defineTool } from './define-tool.ts';

/**
 * The fields the schema shows, tersely (tools/list has a size budget). Every other profile
 * field is accepted too under its snake_case name (OTHER_FIELDS); profileSchema validates
 * all of them, with messages naming these fields.
 */
const FIELDS = {
  format: z.enum(PROFILE_FORMATS).optional().describe('Wire format.'),
  base_url: z.string().optional().describe('openai: …/v1; anthropic: host root.'),
  model: z.string().optional().describe('Model id.'),
  api_key_env: z.string().optional().describe('NAME of the key variable.'),
  use: z.string().optional().describe('What it is for.'),
};

/** The rest of the profile's fields, accepted by name without a schema entry of their own. */
const OTHER_FIELDS = Object.keys(profileSchema.shape)
  .map(toSnake)
  .filter((name) => !(name in FIELDS));

export const PROFILE_ARGUMENTS: ReadonlySet<string> = new Set([
  ...Object.keys(FIELDS),
  ...OTHER_FIELDS,
]);

export const providerSetTool = defineTool({
  name: 'provider_set',
  title: 'Save a profile',
  description:
    'Adds or updates a profile in the user config (effective next call); new ones need format, base_url, ' +
    'model. Any other profile field works too, in snake_case. No keys (see provider_key).',
  inputSchema: {
    name: z.string().describe('Profile name.'),
    ...FIELDS,
    default: z.boolean().optional().describe('Make default.'),
  },
  shouldSeeUnknownArguments: true,
  annotations: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  },
  handler: async (input, context) => {
    const { profilePatch } = await import('../profiles/profile-input.ts');
    const { setProfile } = await import('../profiles/manage-profiles.ts');
    const patch = profilePatch(input, PROFILE_ARGUMENTS);
    return setProfile(context, input.name, patch, input.default === true);
  },
});
