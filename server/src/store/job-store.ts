import { randomBytes } from 'node:crypto';
import {
  appendFileSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  rmdirSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { jobsDir } from '../config/paths.ts';
import { listJobFolders } from './job-folders.ts';
import { claimHeldFile, isAbandoned, readHeldFile, withFileLock } from '../util/file-lock.ts';
import { currentProcessIdentity } from '../util/process-identity.ts';
import { refreshStatusLines } from './refresh-status.ts';
import { writeFileAtomicSync } from '../util/atomic-write.ts';
import { UserError } from '../util/user-error.ts';
import { readJsonFile } from '../util/read-json.ts';
import { fileVersion, readUnlessChanged, type KeptReads } from '../util/file-fingerprint.ts';
import { TOOL_WORDING } from '../util/wording.ts';
import type { JobFile, TaskEvent, TaskState } from './job-file.ts';
import {
  DamagedJobError,
  jobShapeProblem,
  objectProblem,
  strayWorktree,
  type JobDamage,
} from './job-damage.ts';

export const TERMINAL_STATES: readonly TaskState[] = [
  'done',
  'failed',
  'cancelled',
  'timeout',
  'lost',
];
export { DamagedJobError, type JobDamage } from './job-damage.ts';

export const isTerminal = (state: TaskState): boolean => TERMINAL_STATES.includes(state);

/** Short ids that are typed and read: `t_` and six lowercase letters and digits. */
export function newTaskId(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return `t_${[...randomBytes(6)].map((byte) => alphabet[byte % alphabet.length]).join('')}`;
}

const TASK_ID = /^t_[a-z0-9]{1,32}$/;

/** Whether `id` has the shape of a task id (t_ab12cd; an attempt's adds a1, a2, …). */
export function isTaskId(id: string): boolean {
  return TASK_ID.test(id);
}

/**
 * A new task id with its job folder made, so no other start, in this process or another, gets
 * the same id: the folder is created exclusively, and an id already taken is drawn again. The
 * folder holds `starting` (this process) until {@link markStarted}: while that process lives,
 * a folder without job.json is a task being made, however long that takes. A start that is
 * refused later removes the folder.
 */
export function reserveTaskId(dataHome: string, draw: () => string = newTaskId): string {
  for (let tries = 1; ; tries += 1) {
    const id = draw();
    try {
      // `jobs/` may come and go: a refused start removes it when it is left empty.
      mkdirSync(jobsDir(dataHome), { recursive: true });
      mkdirSync(jobDir(dataHome, id));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if ((code !== 'EEXIST' && code !== 'ENOENT') || tries >= 20) throw error;
      continue;
    }
    claimHeldFile(startingPath(dataHome, id), JSON.stringify(currentProcessIdentity()));
    return id;
  }
}

/** A start refused after {@link reserveTaskId}: its folder goes, and `jobs/` too when left empty. */
export function releaseTaskId(dataHome: string, id: string): void {
  rmSync(jobDir(dataHome, id), { recursive: true, force: true });
  try {
    rmdirSync(jobsDir(dataHome));
  } catch {
    // Other tasks' folders are there.
  }
}

/** The task's job.json is written: its folder no longer needs the mark of a start in flight. */
export function markStarted(dataHome: string, id: string): void {
  rmSync(startingPath(dataHome, id), { force: true });
}

function startingPath(dataHome: string, id: string): string {
  return join(jobDir(dataHome, id), 'starting');
}

/**
 * {@link readJob} for a look that comes every turn of a running task: the last read is reused
 * while job.json is as it was, settled (`settledFingerprint`), so an unchanged file costs a
 * stat. Any write (atomic: a new file) shows in the next look. The job is shared: do not change it.
 *
 * What this process wrote itself (`updateJob` given the same `kept`) is reused at once, settled
 * or not, while job.json is still that very file: a task's own progress writes do not make its
 * next looks read the file again. Every writer replaces job.json with a new file renamed over
 * it, made while this one was still in place, so another's write is another inode and shows at
 * the next look. Only two more writes within one tick of the file clock, the second given this
 * file's freed inode and the same size, could pass for this one.
 */
export function readJobUnlessChanged(
  kept: KeptReads<JobFile>,
  dataHome: string,
  id: string,
): JobFile {
  const file = jobFilePath(dataHome, id);
  const version = fileVersion(file);
  const last = kept.get(file);
  if (last?.isOwnWrite && last.fingerprint === version?.fingerprint) return last.value;
  return readUnlessChanged(kept, file, version?.isSettled ? version.fingerprint : undefined, () =>
    readJob(dataHome, id),
  );
}

function jobFilePath(dataHome: string, id: string): string {
  return join(jobDir(dataHome, id), 'job.json');
}

/** A start in flight (its process alive) has reserved this id and not yet written job.json. */
function isStarting(dataHome: string, id: string): boolean {
  const starting = readHeldFile(startingPath(dataHome, id));
  return starting?.holder !== undefined && !isAbandoned(starting);
}

export function jobDir(dataHome: string, id: string): string {
  if (!TASK_ID.test(id)) throw new UserError(`"${id}" is not a task id (they look like t_ab12cd).`);
  return join(jobsDir(dataHome), id);
}

export function readJob(dataHome: string, id: string, wording = TOOL_WORDING): JobFile {
  const dir = jobDir(dataHome, id);
  const file = join(dir, 'job.json');
  const read = readJsonFile(file);
  if (read === undefined && isStarting(dataHome, id)) {
    throw new UserError(`Task ${id} is still being started; look again in a moment.`);
  }
  if (read === undefined && !existsSync(dir)) {
    // A worktree whose job folder is gone (removed by hand, or a start cut short) is not lost.
    if (strayWorktree(dataHome, id))
      throw new DamagedJobError({ id, file, problem: FOLDER_GONE }, wording);
    throw new UserError(
      `No task ${id} (it may have been cleaned up). List them with ${wording.listTasks}.`,
    );
  }
  const problem =
    read === undefined
      ? 'is missing'
      : 'problem' in read
        ? read.problem
        : jobShapeProblem(read.value, id);
  if (problem !== undefined) {
    throw new DamagedJobError(
      { id, file, problem, ...(read?.text ? { text: read.text } : {}) },
      wording,
    );
  }
  return (read as { value: JobFile }).value;
}

export function writeJob(dataHome: string, job: JobFile): Promise<void> {
  writeJobFile(dataHome, job);
  // The pre-rendered status lines follow every job write (it never throws).
  return refreshStatusLines(dataHome);
}

/** Writes job.json (a new file renamed over it); the text written. */
function writeJobFile(dataHome: string, job: JobFile): string {
  const text = `${JSON.stringify(job, null, 2)}\n`;
  writeFileAtomicSync(jobFilePath(dataHome, job.id), text);
  return text;
}

/**
 * Read-modify-write under the job's lock, so the server and the worker never lose each other's
 * updates. The status lines are rendered after the lock is let go: the render waits for no job
 * and no job waits for the render, and it still sees this write, which finished before it began.
 * With `kept`, what was written is kept there for {@link readJobUnlessChanged}: its version is
 * taken under the lock, before any other writer can replace the file.
 */
export async function updateJob(
  dataHome: string,
  id: string,
  change: (job: JobFile) => Partial<JobFile> | undefined,
  kept?: KeptReads<JobFile>,
): Promise<JobFile> {
  let isWritten = false;
  const job = await withFileLock(join(jobDir(dataHome, id), 'lock'), () => {
    const job = readJob(dataHome, id);
    const patch = change(job);
    if (!patch) return Promise.resolve(job);
    const next = { ...job, ...patch, updatedAt: new Date().toISOString() };
    const text = writeJobFile(dataHome, next);
    isWritten = true;
    if (kept) keepOwnWrite(kept, jobFilePath(dataHome, id), text);
    return Promise.resolve(next);
  });
  if (isWritten) await refreshStatusLines(dataHome);
  return job;
}

/** The job as read back from the text written, under the version the file has now. */
function keepOwnWrite(kept: KeptReads<JobFile>, file: string, text: string): void {
  const version = fileVersion(file);
  if (!version) return void kept.delete(file);
  kept.set(file, {
    fingerprint: version.fingerprint,
    value: JSON.parse(text) as JobFile,
    isOwnWrite: true,
  });
}

export function appendEvent(dataHome: string, id: string, type: string, detail: string): void {
  appendFileSync(join(jobDir(dataHome, id), 'events.jsonl'), eventLine(type, detail));
}

function eventLine(type: string, detail: string): string {
  const event: TaskEvent = { ts: new Date().toISOString(), type, detail: detail.slice(0, 500) };
  return `${JSON.stringify(event)}\n`;
}

/** A task's events.jsonl held open for its worker's appends; `close` when the task's work is over. */
export interface EventLog {
  append(type: string, detail: string): void;
  close(): void;
}

/**
 * The events of a running task, through one descriptor opened at the first event rather than an
 * open and a close per line. The lines of one turn of the event loop (a turn of the agent loop
 * records several) are written together once that turn's work is done, so the model's next
 * request leaves first; `close`, and the process's exit, write what is left. Each batch is one
 * write in append mode, as `appendEvent` does, so lines from other writers never interleave. A
 * write that fails closes the descriptor and is tried once more the usual way; lines that still
 * cannot be written (the task's folder is gone) are dropped, as a line of a removed task is.
 */
export function openEventLog(dataHome: string, id: string): EventLog {
  const file = join(jobDir(dataHome, id), 'events.jsonl');
  let fd: number | undefined;
  let lines = '';
  let isScheduled = false;
  let isExitHooked = false;
  const closeFile = () => {
    if (fd === undefined) return;
    const open = fd;
    fd = undefined;
    try {
      closeSync(open);
    } catch {
      // Already gone.
    }
  };
  const flush = () => {
    isScheduled = false;
    if (!lines) return;
    const batch = lines;
    lines = '';
    try {
      fd ??= openSync(file, 'a');
      writeSync(fd, batch);
    } catch {
      closeFile();
      try {
        appendFileSync(file, batch);
      } catch {
        // The task's folder is gone: so are its events.
      }
    }
  };
  return {
    append: (type, detail) => {
      lines += eventLine(type, detail);
      if (!isExitHooked) {
        isExitHooked = true;
        process.on('exit', flush);
      }
      if (isScheduled) return;
      isScheduled = true;
      setImmediate(flush);
    },
    close: () => {
      flush();
      closeFile();
      process.removeListener('exit', flush);
      isExitHooked = false;
    },
  };
}

export function readEvents(dataHome: string, id: string, limit: number): TaskEvent[] {
  try {
    const lines = readFileSync(join(jobDir(dataHome, id), 'events.jsonl'), 'utf8')
      .trim()
      .split('\n');
    return lines.slice(-limit).flatMap((line) => {
      try {
        return [JSON.parse(line) as TaskEvent];
      } catch {
        return [];
      }
    });
  } catch {
    return [];
  }
}

/** Every task in the data home (all projects), newest first; damaged ones are left out. */
export function listJobs(dataHome: string): JobFile[] {
  return scanJobs(dataHome).jobs;
}

/** A job folder younger than this without job.json may be a task being created. */
const CREATING_MS = 60_000;

/**
 * Every task in the data home, newest first, and every task whose job.json cannot be used (see
 * `damagedResult` for result.json): nothing in `jobs/` is invisible.
 */
export function scanJobs(
  dataHome: string,
  now = Date.now(),
): { jobs: JobFile[]; damaged: JobDamage[] } {
  const ids = listJobFolders(dataHome).map((folder) => folder.id);
  const jobs: JobFile[] = [];
  const damaged: JobDamage[] = [];
  for (const id of [...ids, ...worktreesWithoutJob(dataHome, ids, now)].filter((name) =>
    TASK_ID.test(name),
  )) {
    try {
      jobs.push(readJob(dataHome, id));
    } catch (error) {
      if (!(error instanceof DamagedJobError)) continue;
      if (error.damage.problem === 'is missing' && isBeingCreated(dataHome, id, now)) continue;
      damaged.push(error.damage);
    }
  }
  jobs.sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  return { jobs, damaged };
}

const FOLDER_GONE = 'is missing: its job folder is gone, but its worktree remains';

/** Task worktrees under `<dataHome>/worktrees/` with no job folder (not ones still being made). */
function worktreesWithoutJob(dataHome: string, ids: readonly string[], now: number): string[] {
  const root = join(dataHome, 'worktrees');
  const known = new Set(ids);
  let repositories: string[];
  try {
    repositories = readdirSync(root);
  } catch {
    return [];
  }
  return repositories.flatMap((repository) => {
    let entries: string[];
    try {
      entries = readdirSync(join(root, repository));
    } catch {
      return [];
    }
    return entries.filter((id) => {
      if (known.has(id) || !TASK_ID.test(id)) return false;
      try {
        return now - statSync(join(root, repository, id)).mtimeMs >= CREATING_MS;
      } catch {
        return false;
      }
    });
  });
}

function isBeingCreated(dataHome: string, id: string, now: number): boolean {
  if (isStarting(dataHome, id)) return true;
  try {
    return now - statSync(jobDir(dataHome, id)).mtimeMs < CREATING_MS;
  } catch {
    return false;
  }
}

/** An ended task's result.json that exists but cannot be used. */
export function damagedResult(dataHome: string, job: JobFile): JobDamage | undefined {
  if (!isTerminal(job.state)) return undefined;
  const file = join(jobDir(dataHome, job.id), 'result.json');
  const read = readJsonFile(file);
  if (read === undefined) return undefined;
  const problem = 'problem' in read ? read.problem : objectProblem(read.value);
  return problem === undefined ? undefined : { id: job.id, file, problem, job };
}
