import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { jobsDir } from '../config/paths.ts';
import { listJobFolders, type JobFolder, type JobFolderFilter } from './job-folders.ts';
import { parseJson } from '../util/read-json.ts';
import type { DiscoveredSnapshot } from '../config/resolved-profile.ts';
import type { ResourceLimits } from '../config/resource-limits.ts';
import type { AttemptStrategy } from '../config/config-rules.ts';

export const TASK_STATES = [
  'queued',
  'running',
  'needs_input',
  'done',
  'failed',
  'cancelled',
  'timeout',
  'lost',
] as const;
export type TaskState = (typeof TASK_STATES)[number];

/**
 * The part of `jobs/<id>/job.json` that readers outside tasks/ rely on (hooks,
 * status line, monitor). The file is written atomically by the worker process.
 */
export interface JobSummary {
  id: string;
  /** Real (symlink-resolved) absolute path of the project the task belongs to. */
  project: string;
  state: TaskState;
  /** The pending question while `needs_input`. */
  question?: string;
  verdict?: 'passed' | 'failed' | 'unverified';
  /** Set once the supervisor has read the result. */
  reviewedAt?: string;
  /** Set on each attempt of a task run as several: the task it is an attempt of (never listed alone). */
  attemptOf?: string;
  /**
   * Started as an MCP native task (the tasks extension): the client polls it, shows its question
   * as a form and tells its model when it ends, so the monitor announces nothing for it.
   */
  nativeTask?: boolean;
  /**
   * The Claude Code session that started it (`CLAUDE_CODE_SESSION_ID` of the server), when one
   * did: that session's monitor speaks of it, another session's does not.
   */
  session?: string;
}

/** The Claude Code session this process serves, when it runs under one. */
export const sessionOf = (env: Record<string, string | undefined>): string | undefined =>
  env.CLAUDE_CODE_SESSION_ID || undefined;

/**
 * Every readable task summary under the data home (only those written since `filter.writtenSinceMs`
 * when given); unreadable or foreign files are skipped, and so are attempts (their task stands
 * for them).
 */
export function readJobSummaries(dataHome: string, filter: JobFolderFilter = {}): JobSummary[] {
  const folders = listJobFolders(dataHome, filter);
  const jobs = folders.flatMap((folder) => {
    const job = summaryOf(folder);
    return job && isShownAlone(dataHome, job) ? [job] : [];
  });
  // Only the files of the last listing are kept: the cache never outgrows the recent jobs.
  if (filter.writtenSinceMs !== undefined) {
    const listed = new Set(folders.map((folder) => folder.jobFile));
    for (const path of readSummaries.keys()) if (!listed.has(path)) readSummaries.delete(path);
  }
  return jobs;
}

/**
 * The summary last read from each job file, by the file's stamp. The status lines are rendered
 * after every job write of every process, from every recent job: a task's turn re-reads only
 * the job files written since its previous render (its own, mostly), not all of them.
 */
const readSummaries = new Map<string, { stamp: string; job: JobSummary | undefined }>();

function summaryOf(folder: JobFolder): JobSummary | undefined {
  if (folder.stamp === undefined) return readJobSummary(folder.jobFile);
  const known = readSummaries.get(folder.jobFile);
  if (known?.stamp === folder.stamp) return known.job;
  const job = readJobSummary(folder.jobFile);
  readSummaries.set(folder.jobFile, { stamp: folder.stamp, job });
  return job;
}

/**
 * Whether a job is listed on its own: every task is, an attempt only when its task is not there
 * to stand for it (its task's file never got written, in a start that crashed).
 */
export function isShownAlone(dataHome: string, job: JobSummary): boolean {
  return (
    job.attemptOf === undefined || !existsSync(join(jobsDir(dataHome), job.attemptOf, 'job.json'))
  );
}

/** One job file's summary; undefined when it is unreadable, half-written or not a job. */
export function readJobSummary(path: string): JobSummary | undefined {
  try {
    const job = parseJson(readFileSync(path, 'utf8')) as Partial<JobSummary>;
    const isValid =
      typeof job.id === 'string' &&
      typeof job.project === 'string' &&
      TASK_STATES.includes(job.state as TaskState);
    return isValid ? (job as JobSummary) : undefined;
  } catch {
    return undefined;
  }
}

/** Finished states whose result the supervisor should review. */
export function awaitsReview(job: JobSummary): boolean {
  return ['done', 'failed', 'timeout', 'lost'].includes(job.state) && !job.reviewedAt;
}

/**
 * Where a task's repository is, recorded when the task starts and given to git explicitly on
 * every later call: git never discovers it again from a `.git` file or folder that the worker
 * could have replaced.
 */
export interface PinnedRepository {
  /** `--git-dir`: the repository's (or the worktree's own) git directory, real path. */
  gitDir: string;
  /** `--work-tree`: the top of the checkout, real path. */
  workTree: string;
}

/**
 * Where a task's git metadata is, taken once when the task starts (before any worker ran):
 * every later git call of the product names these instead of discovering them again.
 */
/**
 * A task's runner as it was at the start (`runners.<name>` of the user's config): later config
 * changes do not move a running task. Paths and names only; no secret.
 */
export interface RecordedRunner {
  /** Its name in the config. */
  name: string;
  host: string;
  port?: number;
  user?: string;
  identityFile?: string;
  knownHostsFile?: string;
  /** The absolute directory on the runner that holds one folder per task. */
  workdir: string;
  /** The task's folder there: `<workdir>/<task id>`, holding `tree/` (the checkout) and `tmp/`. */
  taskDir: string;
  /** Commands run in bubblewrap there: they write only the checkout (never its `.git`) and tmp, with no network. */
  sandboxed: boolean;
  /** `bash` when the runner has it, else `sh`. */
  shell: 'bash' | 'sh';
  /** Tasks the runner takes at once, across sessions. */
  maxTasks?: number;
}

export interface RecordedGit extends PinnedRepository {
  /** The shared repository (objects, refs, config): `gitDir` itself outside a linked worktree. */
  commonDir: string;
  /** The text of the checkout's `.git` file when it is one (a linked worktree's pointer). */
  pointer?: string;
  /** HEAD's commit at the start; absent in a repository without commits. */
  startCommit?: string;
}

/** Git-shaped paths of a task directory at its start: relative path → fingerprint ('' unknown). */
export type GitShapesAtStart = Readonly<Record<string, string>>;

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
  /**
   * Git-shaped paths (`.git` entries, folders shaped like a git directory, `.gitmodules`: see
   * git/git-shapes.ts) already inside the task directory (the worktree, or the in-place workdir)
   * at its start, relative to it: the user's own. Read-only to sandboxed commands.
   */
  nestedGitAtStart?: string[];
  /** Their fingerprints at the start (path → fingerprint): a change at the end is the worker's. */
  gitShapesAtStart?: GitShapesAtStart;
  /** An in-place task's snapshot of its workdir, taken before the worker started. */
  snapshot?: InPlaceSnapshot;
  /**
   * What the worker did to git metadata (`tampered`) or to the user's repository (`damaged`),
   * and keys of this machine found in its work (`keys`): tampered work or work holding a key
   * is never salvaged.
   */
  gitProblems?: {
    tampered: string[];
    damaged: string[];
    keys?: string[];
    /** The worker's own commits taken off the task's branch (or why that failed). */
    offBranch?: string;
  };
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
  /**
   * The detached process running the task. Alone (`hosted` absent), its process group id is its
   * pid. `hosted`: a task host running this task among others (task-host.ts); the task is in it
   * while its `hosted` marker file exists, and is stopped by a request, never by killing the host.
   */
  worker?: { pid: number; startTime: string; hosted?: true };
  /** The machine run_bash and the test command run on, when not this one. */
  runner?: RecordedRunner;
  /** Whether run_bash and the test command run in the OS sandbox (absent on tasks from before it). */
  sandboxed?: boolean;
  /** Why the task runs unsandboxed, or what the sandbox could not enforce here. */
  sandboxNote?: string;
  /**
   * Sandboxed on an earlier process's check (sandbox-record.ts): its worker probes the sandbox
   * before the task's first command.
   */
  sandboxOnRecord?: boolean;
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
  /**
   * A task run as several attempts: each attempt is a task of its own (`attemptOf` this one,
   * with its worker, worktree and branch); this one has no worker and shows them as one.
   */
  attempts?: AttemptRef[];
  /**
   * How the attempts run: racing (`first_pass`, `best_review`), or one after another up a
   * ladder (`ladder`: the next starts only when the one before failed its verification).
   */
  attemptStrategy?: AttemptStrategy | 'ladder';
  /** An attempt that is a rung of a ladder: its place, from 1. */
  rung?: number;
  /** Why `profile: "auto"` chose what it chose: the one line every result carries. */
  route?: string;
  /** The attempt that won, set once (the first to qualify under `first_pass`). */
  winner?: string;
  /** Why the task is being stopped (a cancel, another attempt winning); set before any kill. */
  stopRequested?: string;
}

/**
 * The snapshot of an in-place task's workdir (see tasks/in-place-snapshot.ts): what the end
 * compares the disk with, and what `task_cleanup` with `discard` puts back.
 */
export interface InPlaceSnapshot {
  /** Its folder, `jobs/<id>/snapshot`: `manifest.json` and the copies under `files/`. */
  dir: string;
  /** Files, folders and links it holds. */
  entries: number;
  bytes: number;
  /** What it does not hold, and why (git metadata, delegate's own data inside the workdir). */
  leftOut: string[];
}

/** One attempt of a task: its own task id and the profile it runs on. */
export interface AttemptRef {
  id: string;
  profile: string;
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
