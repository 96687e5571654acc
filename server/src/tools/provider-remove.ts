import { z } from 'zod';

import { defineTool } from './define-tool.ts';

export const providerRemoveTool = defineTool({
  name: 'provider_remove',
  title: 'Remove a profile',
  description: 'Removes a profile and its stored key from the user config.',
  inputSchema: { name: z.string().describe('Profile name.') },
  annotations: {
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: true,
    openWorldHint: false,
  },
  handler: async (input, context) => {
    const { removeProfile } = await import('../profiles/manage-profiles.ts');
    return removeProfile(context, input.name);
  },
});
