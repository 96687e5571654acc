import { realpathSync } from 'node:fs';
import { z } from 'zod';

import { loadServices } from './load-services.ts';
import { READS_LOCAL_FILES, defineTool } from './define-tool.ts';

export const taskStatusTool = defineTool({
  name: 'task_status',
  title: 'Task status',
  description:
    'Returns one short line per task: state, step, current activity, or the pending question. Cheap: poll it ' +
    'freely. Without task_ids: this project’s active tasks and finished ones not yet reviewed.',
  inputSchema: {
    task_ids: z
      .array(z.string().min(1))
      .max(50)
      .optional()
      .describe('Tasks to show (default: see above).'),
  },
  annotations: READS_LOCAL_FILES,
  handler: async (input, context) => {
    const { taskStatusText } = await loadServices();
    return taskStatusText(context.dataHome, realpathSync(context.projectDir), input.task_ids);
  },
});
