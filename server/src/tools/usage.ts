import { z } from 'zod';

import { READS_LOCAL_FILES } from './annotations.ts';
import { defineTool } from './define-tool.ts';

export const usageTool = defineTool({
  name: 'usage',
  title: 'Worker usage and budget',
  description:
    'Reports worker calls, tokens and cost (today, all time) by profile, budget left, and supervisor ' +
    'tokens avoided (file bytes workers read instead of you). Local ledger only.',
  inputSchema: () => ({
    period: z
      .enum(['today', 'all', 'both'])
      .optional()
      .describe('today (UTC), all time, or both (default).'),
  }),
  annotations: READS_LOCAL_FILES,
  handler: (input, { context, services }) => {
    const { loadConfig, usageReport } = services;
    const config = loadConfig(context.dataHome, context.projectDir, context.env);
    return usageReport(context.dataHome, config, input.period ?? 'both', context.now());
  },
});
