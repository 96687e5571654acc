import { cleanupTasks } from '../tasks/task-actions.ts';
import { CLI_WORDING } from '../util/wording.ts';
import { parseCli, usageError } from './cli-args.ts';
import type { CliCommand } from './cli-command.ts';

const USAGE = 'cleanup <task id>|--all-finished [--keep-branch]';

/** `delegate cleanup`: task_cleanup from a terminal. */
export const cleanupCommand: CliCommand = {
  usage: USAGE,
  summary: "remove an ended task's worktree, branch and files (or every ended task's)",
  help: `Removes an ended task's worktree, its delegate/<id> branch (kept while unmerged work is on it) and its
files. Refuses a running task: cancel it first.

Options:
  --all-finished   clean up every ended task of this project
  --keep-branch    keep the delegate/<id> branch`,
  async run(args, context) {
    const options = {
      'all-finished': { type: 'boolean' },
      'keep-branch': { type: 'boolean' },
    } as const;
    const parsed = parseCli(args, options, USAGE, context);
    if (!parsed) return 2;
    const [id, ...rest] = parsed.positionals;
    const allFinished = parsed.values['all-finished'] ?? false;
    if (rest.length > 0 || Boolean(id) === allFinished)
      return usageError(context, 'name one task id, or pass --all-finished.', USAGE);
    const report = await cleanupTasks(context.dataHome, context.projectDir, {
      ...(id ? { taskId: id } : {}),
      allFinished,
      keepBranch: parsed.values['keep-branch'] ?? false,
      wording: CLI_WORDING,
    });
    context.stdout.write(`${report}\n`);
    return 0;
  },
};
