import { readFileSync } from 'node:fs';
import { z } from 'zod';

import { loadEngines } from '../load-engines.ts';
import { defineTool } from './define-tool.ts';

const INLINE_PATCH_BYTES = 4_000;

export const taskResultTool = defineTool({
  name: 'task_result',
  title: 'Task result',
  description:
    'Returns the result of an ended task: verdict with the test command’s exit code and output tail (facts, not ' +
    'the model’s claim), summary, files changed, diffstat, patch path (patch inline when small) and how to merge.',
  inputSchema: {
    task_id: z.string().min(1).describe('The task.'),
    include_patch: z
      .boolean()
      .optional()
      .describe('Inline the patch even when large (default: only when small).'),
  },
  annotations: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  },
  handler: async (input, context) => {
    const { ensureResult, getTask, isTerminal, resultText, statusLine, updateJob } =
      await loadEngines();
    const job = await getTask(context.dataHome, input.task_id);
    if (!isTerminal(job.state))
      return `${statusLine(job)}\nStill running; the result comes when it ends.`;
    const result = await ensureResult(context.dataHome, job);
    const showPatch =
      result.patchPath && (input.include_patch || result.patchBytes <= INLINE_PATCH_BYTES);
    const patch =
      showPatch && result.patchPath && result.patchBytes > 0
        ? readFileSync(result.patchPath, 'utf8')
        : undefined;
    await updateJob(context.dataHome, job.id, (current) =>
      current.reviewedAt ? undefined : { reviewedAt: new Date().toISOString() },
    );
    return resultText(job, result, patch);
  },
});
