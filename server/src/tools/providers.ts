import { z } from 'zod';

import { READS_ENDPOINTS } from './annotations.ts';
import { defineTool } from './define-tool.ts';

export const providersTool = defineTool({
  name: 'providers',
  title: 'List worker profiles',
  description:
    'Lists worker profiles (use, format, model, endpoint, local or not, key source, origin, default) ' +
    'and runners; with check, reachability, served models, runner checks.',
  inputSchema: () => ({
    check: z.boolean().optional().describe('Contact each endpoint and runner.'),
  }),
  annotations: READS_ENDPOINTS,
  handler: async (input, { context, services }) =>
    services.describeProviders(context, input.check ?? false),
});
