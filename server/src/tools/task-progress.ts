import { z } from 'zod';

import { READS_LOCAL_FILES } from './annotations.ts';
import { defineTool } from './define-tool.ts';
import { inertLine, quotePath } from '../util/inert-text.ts';
import { formatUsd } from '../util/format-usd.ts';

export const taskProgressTool = defineTool({
  name: 'task_progress',
  title: 'Task progress (verbose)',
  description:
    'One task in detail: state, step, recent activity, files touched, sandbox, hosts, runner, ' +
    'cost, elapsed time. Call it occasionally; task_status is the cheap poll.',
  inputSchema: () => ({
    task_id: z.string().min(1).describe('The task.'),
    limit: z
      .number()
      .int()
      .positive()
      .max(200)
      .optional()
      .describe('Recent events to show (default 15).'),
  }),
  annotations: READS_LOCAL_FILES,
  handler: async (input, { context, services }) => {
    const { attemptStatusLines, getTask, readEvents, sandboxLine, statusLine } = services;
    const job = await getTask(context.dataHome, input.task_id);
    const now = Date.now();
    const seconds = (iso?: string) => (iso ? Math.round((now - Date.parse(iso)) / 1000) : 0);
    const events = readEvents(context.dataHome, job.id, input.limit ?? 15);
    return [
      statusLine(job, now),
      `elapsed: ${seconds(job.startedAt ?? job.createdAt)} s · last activity ${seconds(job.lastEventAt)} s ago · cost so far ${formatUsd(job.costUsd)}`,
      ...(job.attempts
        ? [
            `attempts (${job.attemptStrategy}; the winner's work lands on branch delegate/${job.id}):`,
            ...attemptStatusLines(context.dataHome, job, now).map((line) => `  ${line}`),
          ]
        : [
            `model: ${inertLine(job.modelAnswered ?? job.profile ?? '?', 120)} · turns ${job.step}/${job.maxTurns} · ${job.isolation === 'worktree' ? `branch ${job.branch}` : job.workdir}`,
          ]),
      `files touched: ${job.filesTouched.length ? job.filesTouched.map(quotePath).join(', ') : 'none yet'}`,
      sandboxLine(job),
      'recent activity:',
      ...events.map(
        (event) =>
          `  ${event.ts.slice(11, 19)} ${inertLine(event.type, 40)}: ${inertLine(event.detail, 500)}`,
      ),
    ]
      .filter(Boolean)
      .join('\n');
  },
});
