import { INLINE_PATCH_MAX_BYTES, reviewTask } from '../tasks/task-actions.ts';
import { formatBytes } from '../util/format-bytes.ts';
import { CLI_WORDING } from '../util/wording.ts';
import { parseCli, usageError } from './cli-args.ts';
import type { CliCommand } from './cli-command.ts';

const USAGE = 'result <task id> [--patch] [--json]';

/** `delegate result`: task_result from a terminal — the facts of an ended task, then its patch. */
export const resultCommand: CliCommand = {
  usage: USAGE,
  summary: "an ended task's verdict, test output, summary, files changed and patch",
  help: `Shows what an ended task did: the verdict with the test command's exit code and output tail, the
summary, the files changed, the diffstat, the patch (inline when small) and how to take the work.
Reading it marks the task reviewed. A running task prints its status line.

Options:
  --patch   print the patch even when it is large (its first ${formatBytes(INLINE_PATCH_MAX_BYTES)} at most;
            the whole patch is in the file the result names)
  --json    one JSON object: id, state, ended, verdict, the result file's fields, the patch
            (the same start of it) and patchCut (true when the patch was cut)`,
  async run(args, context) {
    const options = { patch: { type: 'boolean' }, json: { type: 'boolean' } } as const;
    const parsed = parseCli(args, options, USAGE, context);
    if (!parsed) return 2;
    const [id, ...rest] = parsed.positionals;
    if (!id || rest.length > 0) return usageError(context, 'name one task id.', USAGE);
    const review = await reviewTask(context.dataHome, id, {
      includePatch: parsed.values.patch ?? false,
      wording: CLI_WORDING,
    });
    if (!parsed.values.json) {
      context.stdout.write(`${review.text}\n`);
      return 0;
    }
    const { job, result } = review;
    const json = {
      id: job.id,
      state: job.state,
      ended: result !== undefined,
      verdict: job.verdict ?? null,
      ...(result ? { result } : {}),
      patch: review.patch?.text ?? null,
      patchCut: review.patch?.isCut ?? false,
    };
    context.stdout.write(`${JSON.stringify(json)}\n`);
    return 0;
  },
};
