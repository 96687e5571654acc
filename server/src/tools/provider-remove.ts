import { z } from 'zod';

import { REMOVES_LOCAL_FILES } from './annotations.ts';
import { defineTool } from './define-tool.ts';

export const providerRemoveTool = defineTool({
  name: 'provider_remove',
  title: 'Remove a profile',
  description: 'Removes a profile and its stored key from the user config.',
  inputSchema: () => ({ name: z.string().describe('Profile name.') }),
  annotations: REMOVES_LOCAL_FILES,
  handler: async (input, { context, services }) => services.removeProfile(context, input.name),
});
