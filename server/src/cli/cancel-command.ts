import { cancelTask } from '../tasks/task-actions.ts';
import { CLI_WORDING } from '../util/wording.ts';
import { parseCli, usageError } from './cli-args.ts';
import type { CliCommand } from './cli-command.ts';

const USAGE = 'cancel <task id>';

/** `delegate cancel`: task_cancel from a terminal. */
export const cancelCommand: CliCommand = {
  usage: USAGE,
  summary:
    "stop a task: its work and every process of it; salvage its work to the task's branch and patch",
  help: `Stops the task's work and kills every process it started, salvages its work to the task branch
and a patch, and marks it cancelled. An ended task is left as it is. Read what was salvaged with
delegate result <task id>.`,
  async run(args, context) {
    const parsed = parseCli(args, {}, USAGE, context);
    if (!parsed) return 2;
    const [id, ...rest] = parsed.positionals;
    if (!id || rest.length > 0) return usageError(context, 'name one task id.', USAGE);
    context.stdout.write(`${await cancelTask(context.dataHome, id, CLI_WORDING)}\n`);
    return 0;
  },
};
