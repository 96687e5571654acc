import { join, resolve } from 'node:path';
import { z } from 'zod';
import { CLI_WORDING, inCliWords } from '../util/wording.ts';
import { parseCli, usageError } from './cli-args.ts';
import type { CliCommand, CliContext } from './cli-command.ts';
import { hasFailed, WAIT_EXIT } from './wait-command.ts';

const USAGE =
  'start "<task>" [--profile <name>] [--test "<command>"] [--attempts <n>] [--runner <name>] [--wait]';

/** How often `--wait` looks at the task. */
const WAIT_POLL_MS = 1_000;

/**
 * `delegate start`: task_start from a terminal. The same options (as flags) and the same checks;
 * the same text back, naming `delegate` commands for the next steps. `--wait` blocks until the
 * task ends and prints its result, with `delegate wait`'s exit codes.
 */
export const startCommand: CliCommand = {
  usage: USAGE,
  summary: 'start a task for a worker (task_start from a terminal); --wait for its result',
  help: `Starts a task: in a git repository it works in a disposable worktree on branch delegate/<id>, from
HEAD plus your uncommitted changes; the test command runs before any token is spent and after the
work, and failures go back to the worker. It returns at once with the task's id (follow it with
delegate tasks, delegate wait, delegate result), or with --wait prints the result when it ends.

Options:
  --profile <name>        worker profile, or "auto" (default: the default profile)
  --agent <name>          agent definition the worker follows
  --test "<command>"      command verifying the work (e.g. "npm test")
  --done "<text>"         definition of done: a reviewer grades the diff against it
  --attempts <n>          workers racing in their own worktrees (2-5)
  --escalate <a,b,…>      profiles climbed while the tests fail
  --runner <name>         SSH runner for its commands and tests
  --workdir <dir>         where it works (default: here)
  --isolation <mode>      worktree (default in a repository) or none (edits in place)
  --base <branch>         branch or commit to start from ("HEAD": the last commit only)
  --budget <usd>          cost cap of the whole task
  --max-turns <n>         model turns at most
  --timeout <seconds>     hard time limit
  --wait                  block until it ends and print the result (exit 0 passed or done,
                          1 failed); Ctrl-C stops waiting, not the task`,
  async run(args, context) {
    const parsed = parseCli(
      args,
      {
        ...Object.fromEntries(Object.keys(FLAGS).map((flag) => [flag, { type: 'string' }])),
        wait: { type: 'boolean' },
      } as const,
      USAGE,
      context,
    );
    if (!parsed) return 2;
    const values = parsed.values as Record<string, string | boolean | undefined>;
    const task = parsed.positionals.join(' ').trim();
    if (!task) return usageError(context, 'say what the task is, in quotes.', USAGE);
    const input: Record<string, unknown> = { task };
    for (const [flag, argument] of Object.entries(FLAGS)) {
      const given = values[flag];
      if (typeof given === 'string') input[argument] = asArgument(argument, given);
    }
    const { taskStartInput, runTaskStart } = await import('../tools/task-start.ts');
    const checked = z.object(taskStartInput()).strict().safeParse(input);
    if (!checked.success) {
      const issue = checked.error.issues[0]!;
      const flag = Object.entries(FLAGS).find(([, argument]) => argument === issue.path[0])?.[0];
      return usageError(context, `${flag ? `--${flag}` : 'task'}: ${issue.message}`, USAGE);
    }
    const services = await import('../tools/services.ts');
    const abort = new AbortController();
    const started = await runTaskStart(checked.data, {
      context: {
        ...context,
        workerScript: join(context.pluginRoot, 'dist', 'task-worker.mjs'),
      },
      services,
      call: { signal: abort.signal, reportProgress: () => Promise.resolve() },
    });
    if (!values.wait) {
      context.stdout.write(`${inCliWords(started.text)}\n`);
      return 0;
    }
    return waitForResult(started.job.id, context);
  },
};

/** Each flag and the task_start argument it sets. */
const FLAGS = {
  profile: 'profile',
  agent: 'agent',
  test: 'test_command',
  done: 'definition_of_done',
  attempts: 'attempts',
  escalate: 'escalate',
  runner: 'runner',
  workdir: 'workdir',
  isolation: 'isolation',
  base: 'base_branch',
  budget: 'budget_usd',
  'max-turns': 'max_turns',
  timeout: 'timeout_s',
} as const;

const NUMBERS = new Set<string>(['attempts', 'budget_usd', 'max_turns', 'timeout_s']);

/** A flag's text as its task_start argument (what is not a number fails the schema's check). */
function asArgument(argument: string, text: string): unknown {
  if (NUMBERS.has(argument)) return Number(text);
  if (argument === 'escalate') return text.split(',').map((name) => name.trim());
  // Relative to where the command runs, as a terminal user means it.
  if (argument === 'workdir') return resolve(process.cwd(), text);
  return text;
}

/** `--wait`: the task's result once it ended (marked reviewed, as `delegate result`). */
async function waitForResult(id: string, context: CliContext): Promise<number> {
  const { getTask } = await import('../tasks/task-queries.ts');
  const { isTerminal } = await import('../store/job-store.ts');
  const { reviewTask } = await import('../tasks/task-actions.ts');
  context.stderr.write(
    `delegate: task ${id} started; waiting for it to end (Ctrl-C stops waiting, not the task)\n`,
  );
  let job = await getTask(context.dataHome, id, CLI_WORDING);
  while (!isTerminal(job.state)) {
    await new Promise((resolve) => setTimeout(resolve, WAIT_POLL_MS));
    job = await getTask(context.dataHome, id, CLI_WORDING);
  }
  const review = await reviewTask(context.dataHome, id, {
    includePatch: false,
    wording: CLI_WORDING,
  });
  context.stdout.write(`${review.text}\n`);
  return hasFailed(job) ? WAIT_EXIT.anyFailed : WAIT_EXIT.allDone;
}
