import { z } from 'zod';

import { REMOVES_LOCAL_FILES } from './annotations.ts';
import { defineTool } from './define-tool.ts';

export const taskCancelTool = defineTool({
  name: 'task_cancel',
  title: 'Cancel a task',
  description:
    'Cancels a task: kills the worker and all it started, and salvages its work (see task_result).',
  inputSchema: () => ({ task_id: z.string().min(1).describe('The task.') }),
  annotations: REMOVES_LOCAL_FILES,
  handler: async (input, { context, services }) =>
    services.cancelTask(context.dataHome, input.task_id),
});
