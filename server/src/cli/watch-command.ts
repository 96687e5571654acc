import { readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { jobsDir } from '../config/paths.ts';
import { withFileLock } from '../util/file-lock.ts';
import { announcedPath, projectStatusKey, statusDir } from '../store/status-key.ts';
import { readJobSummaries, sessionOf } from '../store/job-file.ts';
import { writeFileAtomicSync } from '../util/atomic-write.ts';
import type { CliCommand, CliContext } from './cli-command.ts';
import { watchJobs } from './job-watch.ts';
import { decideAnnouncements, type AnnouncedRecord, type WatchedJob } from './task-transitions.ts';
import { parseJson } from '../util/read-json.ts';

const POLL_MS = 30_000;
const ACTIVE = new Set(['queued', 'running', 'needs_input']);

/**
 * `delegate watch`: the plugin's monitor. Prints one line per task transition of this project
 * (a question, the end of a task) and nothing else; what it printed is recorded per project,
 * so a restarted watcher — or a second session on the same project — never repeats a line.
 */
export const watchCommand: CliCommand = {
  usage: 'watch',
  summary: "print one line per task transition of this project (the plugin's monitor)",
  help: `Prints one line per state change of this project's tasks until stopped; the plugin's monitor runs it so
Claude Code hears when a task needs an answer or ends.`,
  async run(args, context) {
    if (args.length > 0) {
      context.stderr.write('Usage: delegate watch  (takes no arguments)\n');
      return 2;
    }
    await watchProject(context);
    return 0;
  },
};

async function watchProject(context: CliContext): Promise<void> {
  const project = realpathOr(context.projectDir);
  const parent = process.ppid;
  let endWatch: () => void = () => undefined;
  const ended = new Promise<void>((resolve) => (endWatch = resolve));
  const scan = serialised(() =>
    scanOnce(context, project, (ids) => watch.watchTasks(ids)).catch((error: unknown) => {
      context.stderr.write(`[delegate watch] ${String(error)}\n`);
    }),
  );
  const watch = watchJobs(context.dataHome, {
    pollMs: Number(context.env.DELEGATE_WATCH_POLL_MS_FOR_TEST) || POLL_MS,
    // Orphaned (the session ended without stopping us): leave quietly.
    onChange: (reason) => (reason === 'poll' && process.ppid !== parent ? stop() : scan()),
  });
  const stop = () => {
    watch.close();
    endWatch();
  };
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.once(signal, stop);
  context.stdout.on('error', stop);
  scan();
  await ended;
}

/** Runs `action` one at a time; calls meanwhile fold into one more run after the current one. */
function serialised(action: () => Promise<void>): () => void {
  let running = false;
  let again = false;
  const run = (): void => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    void action().finally(() => {
      running = false;
      if (again) {
        again = false;
        run();
      }
    });
  };
  return run;
}

async function scanOnce(
  context: CliContext,
  project: string,
  watchTasks: (ids: string[]) => void,
): Promise<void> {
  const { dataHome } = context;
  const session = sessionOf(context.env);
  let jobs = ownJobs(dataHome, project);
  const active = jobs.filter((job) => ACTIVE.has(job.state));
  if (active.length > 0) {
    // Nobody else may be looking: a dead worker or an overdue task is found here (then `lost`
    // or `timeout`, with its work salvaged), so its line does not wait for the next tool call.
    const { getTask } = await import('../tasks/task-queries.ts');
    await Promise.all(active.map((job) => getTask(dataHome, job.id).catch(() => undefined)));
    jobs = ownJobs(dataHome, project);
  }
  watchTasks(jobs.filter((job) => ACTIVE.has(job.state)).map((job) => job.id));
  const recordPath = announcedPath(dataHome, project);
  const lock = join(statusDir(dataHome), `${projectStatusKey(project)}.announce.lock`);
  await withFileLock(lock, () => {
    const before = readRecord(recordPath);
    const { lines, record } = decideAnnouncements(
      jobs,
      before,
      context.now().getTime(),
      (job) => filesChanged(dataHome, job.id),
      (job) => isMine(job, session),
    );
    // Printed before it is recorded: a watcher killed in between repeats a line, never loses one.
    for (const line of lines) context.stdout.write(`${line}\n`);
    if (JSON.stringify(record) !== JSON.stringify(before)) {
      writeFileAtomicSync(recordPath, `${JSON.stringify({ project, announced: record })}\n`);
    }
    return Promise.resolve();
  });
}

/**
 * A task this session's monitor speaks of: one it started. Under no session (an older Claude
 * Code, a terminal), every task of the project, as before sessions were told apart.
 */
function isMine(job: WatchedJob, session: string | undefined): boolean {
  return session === undefined || job.session === session;
}

/** The JobSummary contract; the optional fields the lines use are checked where they are read. */
function ownJobs(dataHome: string, project: string): WatchedJob[] {
  return readJobSummaries(dataHome).filter((job) => job.project === project);
}

function readRecord(path: string): AnnouncedRecord {
  try {
    const file = parseJson(readFileSync(path, 'utf8')) as { announced?: unknown };
    const announced = file.announced;
    if (typeof announced !== 'object' || announced === null) return {};
    return Object.fromEntries(
      Object.entries(announced).filter((entry): entry is [string, string] => {
        return typeof entry[1] === 'string';
      }),
    );
  } catch {
    return {};
  }
}

/** Files in the task's diff once its result is written; undefined before (job.json counts then). */
function filesChanged(dataHome: string, id: string): number | undefined {
  try {
    const result = parseJson(readFileSync(join(jobsDir(dataHome), id, 'result.json'), 'utf8')) as {
      filesChanged?: unknown;
    };
    return Array.isArray(result.filesChanged) ? result.filesChanged.length : undefined;
  } catch {
    return undefined;
  }
}

function realpathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
