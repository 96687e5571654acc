import { realpathSync, rmSync } from 'node:fs';
import { z } from 'zod';
import type { JobFile } from '../tasks/job-store.ts';

import { UserError } from '../util/user-error.ts';
import type { EngineContext } from '../engine-context.ts';
import { loadEngines, type Engines } from '../load-engines.ts';
import { defineTool } from './define-tool.ts';

export const taskCleanupTool = defineTool({
  name: 'task_cleanup',
  title: 'Clean up tasks',
  description:
    'Removes a finished task’s worktree, its branch (kept when unmerged work is on it, or with keep_branch) and ' +
    'its files. Refuses a running task (cancel it first). With all_finished: every ended task of this project.',
  inputSchema: {
    task_id: z.string().min(1).optional().describe('The task.'),
    all_finished: z.boolean().optional().describe('Clean every ended task of this project.'),
    keep_branch: z.boolean().optional().describe('Keep the delegate/<id> branch.'),
  },
  annotations: {
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: true,
    openWorldHint: false,
  },
  handler: async (input, context) => {
    const { getTask, isTerminal, listJobs } = await loadEngines();
    if (!input.task_id && !input.all_finished)
      throw new UserError('Pass task_id, or all_finished: true.');
    const project = realpathSync(context.projectDir);
    const jobs = input.task_id
      ? [await getTask(context.dataHome, input.task_id)]
      : listJobs(context.dataHome).filter(
          (job) => job.project === project && isTerminal(job.state),
        );
    const lines = [];
    for (const job of jobs)
      lines.push(await cleanOne(job, context, input.keep_branch ?? false, await loadEngines()));
    return lines.length ? lines.join('\n') : 'No ended tasks to clean up.';
  },
});

async function cleanOne(
  job: JobFile,
  context: EngineContext,
  keepBranch: boolean,
  { isTerminal, jobDir, removeWorktree }: Engines,
): Promise<string> {
  if (!isTerminal(job.state)) {
    throw new UserError(
      `${job.id} is ${job.state}; cancel it with task_cancel before cleaning it up.`,
    );
  }
  let note = '';
  if (job.isolation === 'worktree' && job.repoDir && job.branch && job.worktreePath) {
    const removed = await removeWorktree({
      repoDir: job.repoDir,
      ...(job.git ? { commonDir: job.git.commonDir } : {}),
      worktreePath: job.worktreePath,
      branch: job.branch,
      keepBranch,
      ...(job.uncommittedAtStart && job.baseCommit ? { snapshotBase: job.baseCommit } : {}),
    });
    note = removed.branchDeleted
      ? `; branch ${job.branch} deleted`
      : `; branch ${job.branch} kept${removed.note ? ` (${removed.note})` : ''}`;
  }
  rmSync(jobDir(context.dataHome, job.id), { recursive: true, force: true });
  return `${job.id}: cleaned up${note}`;
}
