import { cleanupTasks } from '../tasks/task-actions.ts';
import { CLI_WORDING } from '../util/wording.ts';
import { parseCli, usageError } from './cli-args.ts';
import type { CliCommand } from './cli-command.ts';

const USAGE = 'cleanup <task id>|--all-finished [--keep-branch] [--discard [--force]]';

/** `delegate cleanup`: task_cleanup from a terminal. */
export const cleanupCommand: CliCommand = {
  usage: USAGE,
  summary: "remove an ended task's worktree, branch and files (or every ended task's)",
  help: `Removes an ended task's worktree, its delegate/<id> branch (kept while unmerged work is on it) and its
files. Refuses a running task: cancel it first. A task that worked in place (isolation "none") keeps
its changes unless --discard puts its folder back from the snapshot taken at its start.

Options:
  --all-finished   clean up every ended task of this project
  --keep-branch    keep the delegate/<id> branch
  --discard        throw the task's work away: its branch goes even unmerged; in place, the files
                   it added are removed and those it changed or deleted come back
  --force          with --discard: also put back files changed again since the task ended`,
  async run(args, context) {
    const options = {
      'all-finished': { type: 'boolean' },
      'keep-branch': { type: 'boolean' },
      discard: { type: 'boolean' },
      force: { type: 'boolean' },
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
      discard: parsed.values.discard ?? false,
      force: parsed.values.force ?? false,
      wording: CLI_WORDING,
    });
    context.stdout.write(`${report}\n`);
    return 0;
  },
};
