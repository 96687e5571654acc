import { z } from 'zod';

import { REMOVES_LOCAL_FILES } from './annotations.ts';
import { defineTool } from './define-tool.ts';

export const taskCleanupTool = defineTool({
  name: 'task_cleanup',
  title: 'Clean up tasks',
  description:
    'Removes an ended task’s worktree, branch (kept if unmerged or with keep_branch), files and runner folder. ' +
    'Refuses a running task (cancel it first).',
  inputSchema: () => ({
    task_id: z.string().min(1).optional().describe('The task.'),
    all_finished: z.boolean().optional().describe('Clean every ended task of this project.'),
    keep_branch: z.boolean().optional().describe('Keep the delegate/<id> branch.'),
    discard: z
      .boolean()
      .optional()
      .describe('Undo the work: delete the branch; restore in-place files.'),
    force: z.boolean().optional().describe('discard even files edited since it ended.'),
  }),
  annotations: REMOVES_LOCAL_FILES,
  handler: async (input, { context, services }) =>
    services.cleanupTasks(context.dataHome, context.projectDir, {
      ...(input.task_id ? { taskId: input.task_id } : {}),
      allFinished: input.all_finished ?? false,
      keepBranch: input.keep_branch ?? false,
      discard: input.discard ?? false,
      force: input.force ?? false,
    }),
});
