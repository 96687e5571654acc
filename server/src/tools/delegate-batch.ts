import { z } from 'zod';

import { errorMessage } from '../util/user-error.ts';
import { RUNS_WORKERS } from './annotations.ts';
import { defineTool } from './define-tool.ts';
import { delegateFields, toDelegateInput } from './delegate.ts';

export const MAX_BATCH_JOBS = 20;
/** What all inline answers of one batch may take together; longer ones go to files. */
const BATCH_INLINE_BUDGET = 24_000;

export const delegateBatchTool = defineTool({
  name: 'delegate_batch',
  title: 'Delegate several jobs in parallel',
  description:
    'Runs up to 20 independent delegate jobs at once; returns one block per job in input ' +
    'order: answer and usage line, or the error (one failing never fails the others).',
  inputSchema: () => ({
    jobs: z
      .array(
        z.object({
          id: z.string().min(1).optional().describe('Your label for the job.'),
          ...delegateFields(),
        }),
      )
      .min(1)
      .max(MAX_BATCH_JOBS)
      .describe('The jobs, each with the delegate fields.'),
  }),
  nativeTask: 'call',
  annotations: RUNS_WORKERS,
  handler: async ({ jobs }, { context, services, call }) => {
    let finished = 0;
    const inlineLimit = Math.max(1_500, Math.floor(BATCH_INLINE_BUDGET / jobs.length));
    const outcomes = await Promise.allSettled(
      jobs.map(async (job, index) => {
        try {
          return await services.runDelegation(
            { ...toDelegateInput(job), inlineLimit },
            context,
            call.signal,
          );
        } finally {
          finished += 1;
          await call.reportProgress(
            `${finished}/${jobs.length} jobs done (job ${job.id ?? index + 1})`,
            finished,
            jobs.length,
          );
        }
      }),
    );
    const failures = outcomes.filter((outcome) => outcome.status === 'rejected').length;
    const blocks = outcomes.map((outcome, index) => {
      const label = `## job ${index + 1}${jobs[index]?.id ? ` (${jobs[index].id})` : ''}`;
      return outcome.status === 'fulfilled'
        ? `${label}: ok\n${outcome.value}`
        : `${label}: FAILED\n${errorMessage(outcome.reason)}`;
    });
    return [`${jobs.length - failures} of ${jobs.length} jobs succeeded.`, ...blocks].join('\n\n');
  },
});
