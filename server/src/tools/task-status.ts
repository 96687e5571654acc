import { realpathSync } from 'node:fs';
import { z } from 'zod';

import { sessionOf } from '../store/job-file.ts';
import { READS_LOCAL_FILES } from './annotations.ts';
import { defineTool } from './define-tool.ts';

export const taskStatusTool = defineTool({
  name: 'task_status',
  title: 'Task status',
  description:
    'One short line per task: state, step, activity or the pending question. Cheap: poll freely. ' +
    'Without task_ids: this project’s active tasks and unreviewed ended ones.',
  inputSchema: () => ({
    task_ids: z
      .array(z.string().min(1))
      .max(50)
      .optional()
      .describe('Tasks to show (default: see above).'),
  }),
  annotations: READS_LOCAL_FILES,
  handler: async (input, { context, services }) =>
    services.taskStatusText(
      context.dataHome,
      realpathSync(context.projectDir),
      input.task_ids,
      undefined,
      sessionOf(context.env),
    ),
});
