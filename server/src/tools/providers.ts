import { z } from 'zod';

import { loadServices } from './load-services.ts';
import { defineTool } from './define-tool.ts';

export const providersTool = defineTool({
  name: 'providers',
  title: 'List worker profiles',
  description:
    "Lists worker profiles: use, format, model, endpoint, local or not, key source, settings' origin, " +
    'default; with check, reachability and served models.',
  inputSchema: {
    check: z.boolean().optional().describe('Contact each endpoint.'),
  },
  annotations: {
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: true,
  },
  handler: async (input, context) =>
    (await loadServices()).describeProviders(context, input.check ?? false),
});
