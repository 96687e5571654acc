import { z } from 'zod';

import { SETS_LOCAL_FILES } from './annotations.ts';
import { defineTool } from './define-tool.ts';

export const taskResultTool = defineTool({
  name: 'task_result',
  title: 'Task result',
  description:
    'Returns an ended task’s result: verdict with the test command’s exit code and output tail (facts, not ' +
    'the model’s claim), summary, files changed, diffstat, patch (inline when small), how to merge.',
  inputSchema: () => ({
    task_id: z.string().min(1).describe('The task.'),
    include_patch: z.boolean().optional().describe('Inline up to 256 KB of the patch.'),
  }),
  annotations: SETS_LOCAL_FILES,
  handler: async (input, { context, services }) => {
    const review = await services.reviewTask(context.dataHome, input.task_id, {
      includePatch: input.include_patch ?? false,
    });
    return review.text;
  },
});
