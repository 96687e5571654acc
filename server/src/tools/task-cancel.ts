import { z } from 'zod';

import { loadEngines } from '../load-engines.ts';
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
    const { finishTask, getTask, isTerminal, killTask, readJob, statusLine } = await loadEngines();
    const job = await getTask(context.dataHome, input.task_id);
    if (isTerminal(job.state)) return `${statusLine(job)} (already ended)`;
    await killTask(job);
    // Children started after the first look are in the job file now; kill those too.
    await killTask(readJob(context.dataHome, job.id));
    await finishTask(context.dataHome, job.id, {
      state: 'cancelled',
      error: 'cancelled by the supervisor',
    });
    return `${statusLine(readJob(context.dataHome, job.id))}\nWork salvaged; see task_result ${job.id}.`;
  },
});
