import { realpathSync } from 'node:fs';
import { damagedStatusLine, type DamagedJob } from '../tasks/damaged-jobs.ts';
import { isTerminal } from '../store/job-store.ts';
import { projectTaskList } from '../tasks/task-queries.ts';
import { statusLine } from '../tasks/task-format.ts';
import { CLI_WORDING } from '../util/wording.ts';
import { parseCli } from './cli-args.ts';
import type { CliCommand } from './cli-command.ts';
import type { JobFile } from '../store/job-file.ts';

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
  --json   one JSON array of tasks (id, state, verdict, reviewed, createdAt, task, line); [] when none.
           A task whose files do not parse has state "damaged" and a "damaged" object (file,
           problem, worktree, branch); delegate cleanup <id> removes it.`,
  async run(args, context) {
    const parsed = parseCli(args, { json: { type: 'boolean' } }, USAGE, context);
    if (!parsed) return 2;
    if (parsed.positionals.length > 0) {
      context.stderr.write(`delegate: tasks takes no arguments.\nUsage: delegate ${USAGE}\n`);
      return 2;
    }
    const project = realpathSync(context.projectDir);
    const { jobs, damaged } = await projectTaskList(context.dataHome, project);
    if (parsed.values.json) {
      const entries = [...jobs.map(taskJson), ...damaged.map(damagedJson)];
      context.stdout.write(`${JSON.stringify(entries)}\n`);
      return 0;
    }
    for (const job of damaged) context.stdout.write(`${damagedStatusLine(job, CLI_WORDING)}\n`);
    if (jobs.length === 0 && damaged.length === 0) {
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

function damagedJson(job: DamagedJob) {
  return {
    id: job.id,
    state: 'damaged',
    verdict: null,
    reviewed: false,
    createdAt: null,
    task: null,
    line: damagedStatusLine(job, CLI_WORDING),
    damaged: {
      file: job.file,
      problem: job.problem,
      worktree: job.worktreePath ?? null,
      branch: job.branch ?? null,
    },
  };
}
