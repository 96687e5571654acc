import type { DiscoveredSnapshot } from '../profiles/discover-local.ts';
import { randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { jobsDir } from '../config/paths.ts';
import { withFileLock } from '../util/file-lock.ts';
import { refreshStatusLines } from './refresh-status.ts';
import { writeFileAtomicSync } from '../util/atomic-write.ts';
import { UserError } from '../util/user-error.ts';
import { readJsonFile } from '../util/read-json.ts';
import { TOOL_WORDING } from '../util/wording.ts';
import type { JobSummary, TaskState } from './job-file.ts';
import {
  DamagedJobError,
  jobShapeProblem,
  objectProblem,
  strayWorktree,
  type JobDamage,
} from './job-damage.ts';
import type { RecordedGit } from '../tasks/worktree.ts';
import type { ResourceLimits } from '../sandbox/index.ts';

/** Facts from running a test command: never the model's claim. */
export interface VerificationFacts {
  command: string;
  exitCode: number | null;
  outputTail: string;
  ms: number;
  timedOut?: boolean;
}

/** `jobs/<id>/job.json`: everything about one task, written atomically under the job's lock. */
export interface JobFile extends JobSummary {
  task: string;
  createdAt: string;
  updatedAt: string;
  startedAt?: string;
  endedAt?: string;
  profile?: string;
  /** The server and model discovery picked, when `profile` is the discovered one. */
  discovered?: DiscoveredSnapshot;
  /** A CLI engine's format (e.g. `claude-cli`) when a vendor CLI runs the task; absent for the builtin agent. */
  engine?: string;
  agent?: { name: string; tier: string; path: string };
  isolation: 'worktree' | 'none';
  /** Where the worker runs: the worktree, or the workdir. */
  workdir: string;
  repoDir?: string;
  /** The worktree's root (workdir may be a folder inside it). */
  worktreePath?: string;
  /**
   * Where the task's git metadata was at its start (absent outside a repository): every git
   * call of the product names it, and the task's end checks it is unchanged.
   */
  git?: RecordedGit;
  /** `.git` entries already inside the task directory at its start (relative to it). */
  nestedGitAtStart?: string[];
  /** What the worker did to git metadata (`tampered`) or to the user's repository (`damaged`). */
  gitProblems?: { tampered: string[]; damaged: string[] };
  branch?: string;
  /** The commit the worktree started from: HEAD, base_branch, or the snapshot below. */
  baseCommit?: string;
  /**
   * Set when the worktree started from the user's uncommitted changes: `baseCommit` is then a
   * snapshot commit on no branch, on top of `head`, differing from it in `files` files.
   */
  uncommittedAtStart?: { head: string; files: number };
  testCommand?: string;
  /** After a failing test run, how many more attempts the worker gets (with the output). */
  fixRounds?: number;
  definitionOfDone?: string;
  /** The profile of the reviewer pass that grades the diff against the definition of done. */
  reviewProfile?: string;
  budgetUsd?: number;
  maxTurns: number;
  timeoutS: number;
  idleTimeoutS: number;
  questionTimeoutS: number;
  /** The detached worker process; its process group id is its pid. */
  worker?: { pid: number; startTime: string };
  /** Whether run_bash and the test command run in the OS sandbox (absent on tasks from before it). */
  sandboxed?: boolean;
  /** Why the task runs unsandboxed, or what the sandbox could not enforce here. */
  sandboxNote?: string;
  /** Hosts sandboxed commands may reach (the profile's `allowHosts` plus the task's `allow_hosts`). */
  allowHosts?: string[];
  /** What each sandboxed command may use (processes per command, memory per process). */
  limits?: ResourceLimits;
  /** Process groups of run_bash commands in flight, killed with the worker on cancel. */
  childPgids?: number[];
  step: number;
  activity?: string;
  lastEventAt: string;
  costUsd: number;
  modelAnswered?: string;
  filesTouched: string[];
  preflight?: VerificationFacts;
  verification?: VerificationFacts;
  /** Test runs that failed and went back to the worker, oldest first. */
  failedAttempts?: VerificationFacts[];
  review?: ReviewFacts;
  summary?: string;
  error?: string;
}

/** The reviewer pass: its verdict on the diff against the definition of done, and why. */
export interface ReviewFacts {
  verdict: 'pass' | 'fail' | 'unclear' | 'error';
  /** The reviewer's criteria and problems (or what went wrong), capped. */
  notes: string;
  profile: string;
  modelAnswered?: string;
  turns: number;
}

export interface TaskEvent {
  ts: string;
  type: string;
  detail: string;
}

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

export function jobDir(dataHome: string, id: string): string {
  if (!TASK_ID.test(id)) throw new UserError(`"${id}" is not a task id (they look like t_ab12cd).`);
  return join(jobsDir(dataHome), id);
}

export function readJob(dataHome: string, id: string, wording = TOOL_WORDING): JobFile {
  const dir = jobDir(dataHome, id);
  const file = join(dir, 'job.json');
  const read = readJsonFile(file);
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
  writeFileAtomicSync(
    join(jobDir(dataHome, job.id), 'job.json'),
    `${JSON.stringify(job, null, 2)}\n`,
  );
  // The pre-rendered status lines follow every job write (it never throws).
  return refreshStatusLines(dataHome);
}

/** Read-modify-write under the job's lock, so the server and the worker never lose each other's updates. */
export async function updateJob(
  dataHome: string,
  id: string,
  change: (job: JobFile) => Partial<JobFile> | undefined,
): Promise<JobFile> {
  return withFileLock(join(jobDir(dataHome, id), 'lock'), async () => {
    const job = readJob(dataHome, id);
    const patch = change(job);
    if (!patch) return job;
    const next = { ...job, ...patch, updatedAt: new Date().toISOString() };
    await writeJob(dataHome, next);
    return next;
  });
}

export function appendEvent(dataHome: string, id: string, type: string, detail: string): void {
  const event: TaskEvent = { ts: new Date().toISOString(), type, detail: detail.slice(0, 500) };
  appendFileSync(join(jobDir(dataHome, id), 'events.jsonl'), `${JSON.stringify(event)}\n`);
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
  let ids: string[];
  try {
    ids = readdirSync(jobsDir(dataHome));
  } catch {
    return { jobs: [], damaged: [] };
  }
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
