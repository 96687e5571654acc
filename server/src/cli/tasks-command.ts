import { realpathSync } from 'node:fs';
import { isTerminal, listJobs } from '../tasks/job-store.ts';
import { reconcileJob } from '../tasks/reconcile.ts';
import { statusLine } from '../tasks/task-format.ts';
import { parseCli } from './cli-args.ts';
import type { CliCommand } from './cli-command.ts';

const USAGE = 'tasks [--json]';

/**
 * `delegate tasks`: this project's tasks, newest first, one line each (the `task_status` line,
 * plus `reviewed` once the result was read). Looking reconciles them: a dead worker shows `lost`.
 */
export const tasksCommand: CliCommand = {
  usage: USAGE,
  summary: "list this project's tasks, one line each",
  async run(args, context) {
    const parsed = parseCli(args, { json: { type: 'boolean' } }, USAGE, context);
    if (!parsed) return 2;
    if (parsed.positionals.length > 0) {
      context.stderr.write(`delegate: tasks takes no arguments.\nUsage: delegate ${USAGE}\n`);
      return 2;
    }
    const project = realpathSync(context.projectDir);
    const jobs = await Promise.all(
      listJobs(context.dataHome)
        .filter((job) => job.project === project)
        .map((job) => reconcileJob(context.dataHome, job)),
    );
    if (jobs.length === 0 && !parsed.values.json) {
      context.stdout.write(`No tasks in this project (${project}).\n`);
      return 0;
    }
    for (const job of jobs) {
      const reviewed = isTerminal(job.state) && job.reviewedAt ? ' · reviewed' : '';
      context.stdout.write(
        parsed.values.json
          ? `${JSON.stringify({ id: job.id, state: job.state, verdict: job.verdict, reviewed: Boolean(job.reviewedAt), createdAt: job.createdAt, task: job.task, line: statusLine(job) })}\n`
          : `${statusLine(job)}${reviewed}\n`,
      );
    }
    return 0;
  },
};
