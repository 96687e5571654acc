import { z } from 'zod';

import { loadServices } from './load-services.ts';
import { defineTool } from './define-tool.ts';

export const taskCancelTool = defineTool({
  name: 'task_cancel',
  title: 'Cancel a task',
  description:
    'Cancels a task: kills the worker and every process it started, salvages its work to the task branch and ' +
    'patch, and marks it cancelled. Read what was salvaged with task_result.',
  inputSchema: { task_id: z.string().min(1).describe('The task.') },
  annotations: {
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: true,
    openWorldHint: false,
  },
  handler: async (input, context) => {
    const { cancelTask } = await loadServices();
    return cancelTask(context.dataHome, input.task_id);
  },
});
