import { z } from 'zod';

import { loadEngines } from '../load-engines.ts';
import { defineTool } from './define-tool.ts';

export const providersTool = defineTool({
  name: 'providers',
  title: 'List worker profiles',
  description:
    'Lists the worker profiles you can delegate to: name, what each is for (use), format, model, ' +
    'endpoint, whether it is local, how it authenticates, and the default. With check: true it ' +
    'also contacts each endpoint and reports reachability, latency and the models it serves.',
  inputSchema: {
    check: z
      .boolean()
      .optional()
      .describe('Contact each endpoint to check reachability and list served models.'),
  },
  annotations: {
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: true,
  },
  handler: async (input, context) =>
    (await loadEngines()).describeProviders(context, input.check ?? false),
});
