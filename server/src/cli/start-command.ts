import { join } from 'node:path';
import { z } from 'zod';
import { inCliWords } from '../util/wording.ts';
import { parseCli, usageError } from './cli-args.ts';
import type { CliCommand, CliContext } from './cli-command.ts';
import { WAIT_EXIT } from './wait-command.ts';

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
        profile: { type: 'string' },
        agent: { type: 'string' },
        test: { type: 'string' },
        done: { type: 'string' },
        attempts: { type: 'string' },
        escalate: { type: 'string' },
        runner: { type: 'string' },
        workdir: { type: 'string' },
        isolation: { type: 'string' },
        base: { type: 'string' },
        budget: { type: 'string' },
        'max-turns': { type: 'string' },
        timeout: { type: 'string' },
        wait: { type: 'boolean' },
      },
      USAGE,
      context,
    );
    if (!parsed) return 2;
    const { values } = parsed;
    const task = parsed.positionals.join(' ').trim();
    if (!task) return usageError(context, 'say what the task is, in quotes.', USAGE);
    const number = (flag: string, text: string | undefined) =>
      text === undefined ? undefined : Number.isFinite(Number(text)) ? Number(text) : flag;
    const numbers = {
      attempts: number('--attempts', values.attempts),
      budget_usd: number('--budget', values.budget),
      max_turns: number('--max-turns', values['max-turns']),
      timeout_s: number('--timeout', values.timeout),
    };
    const { TASK_START_INPUT, runTaskStart } = await import('../tools/task-start.ts');
    const checked = z
      .object(TASK_START_INPUT)
      .strict()
      .safeParse(
        Object.fromEntries(
          Object.entries({
            task,
            profile: values.profile,
            agent: values.agent,
            test_command: values.test,
            definition_of_done: values.done,
            escalate: values.escalate?.split(',').map((name) => name.trim()),
            runner: values.runner,
            // Relative to where the command runs, as a terminal user means it.
            workdir: values.workdir === undefined ? undefined : join(process.cwd(), values.workdir),
            isolation: values.isolation,
            base_branch: values.base,
            ...numbers,
          }).filter(([, value]) => value !== undefined),
        ),
      );
    if (!checked.success) {
      const issue = checked.error.issues[0]!;
      const flag = FLAG_OF[String(issue.path[0])] ?? String(issue.path[0]);
      return usageError(context, `${flag}: ${issue.message}`, USAGE);
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

/** The flag each task_start argument comes from, for errors. */
const FLAG_OF: Record<string, string> = {
  test_command: '--test',
  definition_of_done: '--done',
  budget_usd: '--budget',
  max_turns: '--max-turns',
  timeout_s: '--timeout',
  base_branch: '--base',
};

/** `--wait`: the task's result once it ended (marked reviewed, as `delegate result`). */
async function waitForResult(id: string, context: CliContext): Promise<number> {
  const { getTask } = await import('../tasks/task-queries.ts');
  const { isTerminal } = await import('../store/job-store.ts');
  const { reviewTask } = await import('../tasks/task-actions.ts');
  const { CLI_WORDING } = await import('../util/wording.ts');
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
  return job.state === 'done' && job.verdict !== 'failed' ? WAIT_EXIT.allDone : WAIT_EXIT.anyFailed;
}
