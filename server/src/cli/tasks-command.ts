import { realpathSync } from 'node:fs';
import { isTerminal, listJobs, type JobFile } from '../tasks/job-store.ts';
import { reconcileJob } from '../tasks/reconcile.ts';
import { statusLine } from '../tasks/task-format.ts';
import { CLI_WORDING } from '../util/wording.ts';
import { parseCli } from './cli-args.ts';
import type { CliCommand } from './cli-command.ts';

const USAGE = 'tasks [--json]';

/**
 * `delegate tasks`: this project's tasks, newest first, one line each (the `task_status` line in CLI wording,
 * plus `reviewed` once the result was read). Looking reconciles them: a dead worker shows `lost`.
 */
export const tasksCommand: CliCommand = {
  usage: USAGE,
  summary: "list this project's tasks, one line each",
  help: `Lists this project's background tasks, newest first, one line each with what to do next. A task whose
worker died shows as lost.

Options:
  --json   one JSON array of tasks (id, state, verdict, reviewed, createdAt, task, line); [] when none`,
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
    if (parsed.values.json) {
      context.stdout.write(`${JSON.stringify(jobs.map(taskJson))}\n`);
      return 0;
    }
    if (jobs.length === 0) {
      context.stdout.write(`No tasks in this project (${project}).\n`);
      return 0;
    }
    for (const job of jobs) {
      const reviewed = isTerminal(job.state) && job.reviewedAt ? ' · reviewed' : '';
      context.stdout.write(`${statusLine(job, Date.now(), CLI_WORDING)}${reviewed}\n`);
    }
    return 0;
  },
};

function taskJson(job: JobFile) {
  return {
    id: job.id,
    state: job.state,
    verdict: job.verdict ?? null,
    reviewed: Boolean(job.reviewedAt),
    createdAt: job.createdAt,
    task: job.task,
    line: statusLine(job, Date.now(), CLI_WORDING),
  };
}
