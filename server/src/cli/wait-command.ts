import { isTerminal } from '../store/job-store.ts';
import { getTask } from '../tasks/task-queries.ts';
import { statusLine } from '../tasks/task-format.ts';
import { errorMessage } from '../util/user-error.ts';
import { CLI_WORDING } from '../util/wording.ts';
import { parseCli, usageError } from './cli-args.ts';
import type { CliCommand, CliContext } from './cli-command.ts';
import { watchJobs } from './job-watch.ts';
import type { JobFile } from '../store/job-file.ts';

const USAGE = 'wait <task id>… [--timeout <seconds>] [--json]';
const POLL_MS = 2_000;

/** Exit codes (design §7). */
export const WAIT_EXIT = { allDone: 0, anyFailed: 1, unknownId: 2, timeout: 3 } as const;

/**
 * `delegate wait <ids…>`: blocks until every task has ended, printing one line per task as it
 * ends (`--json`: one JSON object per line). Exit 0 when all are done with a verdict other than
 * `failed`; 1 when any failed, was lost, timed out or was cancelled, or its tests failed; 2 for
 * an unknown id or a usage error; 3 when `--timeout` ran out first and none had failed.
 */
export const waitCommand: CliCommand = {
  usage: USAGE,
  summary: 'block until tasks end; exit 0 all done, 1 any failed, 2 unknown id, 3 timeout',
  help: `Blocks until every named task has ended, printing one line per task as it ends.
Exit codes: 0 all done and passing, 1 any failed, 2 unknown id, 3 --timeout ran out.

Options:
  --timeout <seconds>   stop waiting after this long (exit 3)
  --json                one JSON object per line instead of text`,
  async run(args, context) {
    const parsed = parseCli(
      args,
      { timeout: { type: 'string' }, json: { type: 'boolean' } },
      USAGE,
      context,
    );
    if (!parsed) return 2;
    const ids = [...new Set(parsed.positionals)];
    if (ids.length === 0) return usageError(context, 'name at least one task id.', USAGE);
    const timeoutS =
      parsed.values.timeout === undefined ? undefined : Number(parsed.values.timeout);
    if (timeoutS !== undefined && !(timeoutS >= 0)) {
      return usageError(context, `--timeout takes seconds, not "${parsed.values.timeout}".`, USAGE);
    }
    const unknown = await unknownIds(ids, context);
    if (unknown.length > 0) {
      for (const line of unknown) context.stderr.write(`delegate: ${line}\n`);
      return WAIT_EXIT.unknownId;
    }
    return waitFor(ids, context, { json: parsed.values.json ?? false, timeoutS });
  },
};

async function unknownIds(ids: readonly string[], context: CliContext): Promise<string[]> {
  const found = await Promise.all(
    ids.map((id) =>
      getTask(context.dataHome, id, CLI_WORDING).then(
        () => undefined,
        (error: unknown) => errorMessage(error),
      ),
    ),
  );
  return found.filter((message): message is string => message !== undefined);
}

function waitFor(
  ids: readonly string[],
  context: CliContext,
  options: { json: boolean; timeoutS: number | undefined },
): Promise<number> {
  const pending = new Set(ids);
  const ended: JobFile[] = [];
  const failedCode = () =>
    ended.some(hasFailed) || ended.length < ids.length ? WAIT_EXIT.anyFailed : WAIT_EXIT.allDone;
  return new Promise((resolve) => {
    let isOver = false;
    let checking: Promise<void> | undefined;
    let again = false;
    let deadline: NodeJS.Timeout | undefined;
    const finish = (code: number) => {
      if (isOver) return;
      isOver = true;
      watch.close();
      clearTimeout(deadline);
      resolve(code);
    };
    const check = (): Promise<void> => {
      if (checking) {
        again = true;
        return checking;
      }
      checking = checkPending(ids, pending, ended, context, options.json).finally(() => {
        checking = undefined;
        if (isOver) return;
        watch.watchTasks(pending);
        if (pending.size === 0) finish(failedCode());
        else if (again) {
          again = false;
          void check();
        }
      });
      return checking;
    };
    const watch = watchJobs(context.dataHome, { pollMs: POLL_MS, onChange: () => void check() });
    // The clock starts once the tasks that have already ended are printed.
    void check().then(() => {
      if (isOver || options.timeoutS === undefined) return;
      deadline = setTimeout(() => {
        isOver = true;
        watch.close();
        void (checking ?? Promise.resolve())
          .then(() => timedOut(pending, context, options.json))
          .then(() => {
            const isAllEnded = pending.size === 0;
            resolve(isAllEnded || ended.some(hasFailed) ? failedCode() : WAIT_EXIT.timeout);
          });
      }, options.timeoutS * 1000);
    });
  });
}

/** Prints and removes from `pending` every task that has ended (in the order given). */
async function checkPending(
  ids: readonly string[],
  pending: Set<string>,
  ended: JobFile[],
  context: CliContext,
  json: boolean,
): Promise<void> {
  for (const id of ids) {
    if (!pending.has(id)) continue;
    const job = await getTask(context.dataHome, id).catch(() => undefined);
    if (job && !isTerminal(job.state)) continue;
    // Gone: cleaned up while we waited, so it ended, but its result is gone with it.
    pending.delete(id);
    if (job) ended.push(job);
    context.stdout.write(`${job ? lineOf(job, json) : goneLine(id, json)}\n`);
  }
}

async function timedOut(
  pending: ReadonlySet<string>,
  context: CliContext,
  json: boolean,
): Promise<void> {
  for (const id of pending) {
    const job = await getTask(context.dataHome, id).catch(() => undefined);
    const text = json
      ? JSON.stringify({ id, state: job?.state ?? 'unknown', ended: false })
      : `${job ? statusLine(job, Date.now(), CLI_WORDING) : id} (not ended within --timeout)`;
    context.stdout.write(`${text}\n`);
  }
}

/** An ended task that counts as failed for an exit code: not done, or its tests failed. */
export function hasFailed(job: JobFile): boolean {
  return job.state !== 'done' || job.verdict === 'failed';
}

function lineOf(job: JobFile, json: boolean): string {
  if (!json) return statusLine(job, Date.now(), CLI_WORDING);
  return JSON.stringify({
    id: job.id,
    state: job.state,
    ended: true,
    ...(job.verdict ? { verdict: job.verdict } : {}),
    ...(job.review ? { review: job.review.verdict } : {}),
    ...(job.error ? { error: job.error } : {}),
    costUsd: job.costUsd,
    filesTouched: job.filesTouched?.length ?? 0,
  });
}

function goneLine(id: string, json: boolean): string {
  return json
    ? JSON.stringify({ id, state: 'unknown', ended: true, error: 'cleaned up while waiting' })
    : `${id}: cleaned up while waiting; its result is gone`;
}
