/**
 * What task_result, task_cancel and task_cleanup do, shared with `delegate result|cancel|cleanup`:
 * one implementation, the next step named in the caller's wording.
 */
import { realpathSync, rmSync } from 'node:fs';
import { UserError } from '../util/user-error.ts';
import { TOOL_WORDING, type Wording } from '../util/wording.ts';
import { ensureResult, stopTask, type TaskResultFile } from './finish-task.ts';
import { cleanDamaged, type DamagedJob } from './damaged-jobs.ts';
import {
  DamagedJobError,
  damagedResult,
  isTerminal,
  jobDir,
  readJob,
  updateJob,
} from '../store/job-store.ts';
import { removeAttemptWorktree, settleAttempts, stopAttempts } from './attempts.ts';
import { endTaskProcesses, STOP_WAIT_MS } from './task-processes.ts';
import { resultText, statusLine, type InlinePatch } from './task-format.ts';
import { getTask, locateDamagedTask, projectTaskList } from './task-queries.ts';
import { removeRunnerFolder } from './worktree.ts';
import { removeWorktree } from './worktree-lifecycle.ts';
import { restoreSnapshot } from './in-place-restore.ts';
import type { JobFile } from '../store/job-file.ts';
import { readTextStartSync } from '../util/regular-file.ts';

/** A patch this small comes inline with every result. */
const INLINE_PATCH_BYTES = 4_000;
/**
 * The most of a patch a result holds inline, even when asked for: past it the result says the
 * patch was cut and where the whole is (an 82 MB patch took 113 s as one result).
 */
export const INLINE_PATCH_MAX_BYTES = 256 * 1024;

export interface TaskReview {
  job: JobFile;
  /** Absent while the task runs. */
  result?: TaskResultFile;
  /** The patch's start shown inline (at most INLINE_PATCH_MAX_BYTES). */
  patch?: InlinePatch;
  text: string;
}

/** An ended task's result (patch inline when small or asked for); marks the task reviewed. */
export async function reviewTask(
  dataHome: string,
  id: string,
  options: { includePatch?: boolean; wording?: Wording } = {},
): Promise<TaskReview> {
  const wording = options.wording ?? TOOL_WORDING;
  const job = await getTask(dataHome, id, wording);
  if (!isTerminal(job.state)) {
    return {
      job,
      text: `${statusLine(job, Date.now(), wording)}\nStill running; the result comes when it ends.`,
    };
  }
  const result = await ensureResult(dataHome, job).catch((error: unknown) => {
    throw error instanceof DamagedJobError ? new DamagedJobError(error.damage, wording) : error;
  });
  const patch =
    result.patchPath &&
    result.patchBytes > 0 &&
    (options.includePatch || result.patchBytes <= INLINE_PATCH_BYTES)
      ? inlinePatch(result.patchPath)
      : undefined;
  await updateJob(dataHome, job.id, (current) =>
    current.reviewedAt ? undefined : { reviewedAt: new Date().toISOString() },
  );
  return {
    job,
    result,
    ...(patch === undefined ? {} : { patch }),
    text: resultText(job, result, patch, wording),
  };
}

function inlinePatch(path: string): InlinePatch {
  const start = readTextStartSync(path, `the patch ${path}`, INLINE_PATCH_MAX_BYTES);
  return {
    text: start.text,
    shownBytes: start.shownBytes,
    isCut: start.shownBytes < start.totalBytes,
  };
}

/** Kills the worker and all it started, salvages its work and marks it cancelled. */
export async function cancelTask(
  dataHome: string,
  id: string,
  wording = TOOL_WORDING,
): Promise<string> {
  const job = await getTask(dataHome, id, wording);
  if (isTerminal(job.state)) return `${statusLine(job, Date.now(), wording)} (already ended)`;
  if (job.attempts) {
    await stopAttempts(dataHome, job.id, 'cancelled by the supervisor');
    const ended = statusLine(readJob(dataHome, job.id), Date.now(), wording);
    return `${ended}\nEvery attempt stopped, the best one's work salvaged; see ${wording.result(job.id)}.`;
  }
  // It returns once every process of the task is gone, or names those still stopping.
  const stopping = await stopTask(dataHome, job.id, 'cancelled by the supervisor');
  if (job.attemptOf) await settleAttempts(dataHome, job.attemptOf);
  const ended = statusLine(readJob(dataHome, job.id), Date.now(), wording);
  const note = stopping.length
    ? `\nStill stopping: process${stopping.length > 1 ? 'es' : ''} ${stopping.join(', ')} had not exited ${STOP_WAIT_MS / 1000} s after SIGKILL; check with ps -p ${stopping.join(',')}.`
    : '';
  return `${ended}\nWork salvaged; see ${wording.result(job.id)}.${note}`;
}

export interface CleanupRequest {
  taskId?: string;
  allFinished?: boolean;
  keepBranch?: boolean;
  /** Throw the task's work away: its branch goes even unmerged; an in-place task's files are put back. */
  discard?: boolean;
  /** With discard: put back even paths changed again since the task ended. */
  force?: boolean;
  wording?: Wording;
}

/** What to do with an ended task's work as it is cleaned up. */
interface CleanHow {
  keepBranch: boolean;
  discard: boolean;
  force: boolean;
}

/** Removes ended tasks' worktrees, branches (unless unmerged or kept) and files. */
export async function cleanupTasks(
  dataHome: string,
  projectDir: string,
  request: CleanupRequest,
): Promise<string> {
  const wording = request.wording ?? TOOL_WORDING;
  if (!request.taskId && !request.allFinished)
    throw new UserError('Pass task_id, or all_finished: true.');
  const how = cleanHow(request);
  const project = realpathSync(projectDir);
  if (request.taskId) return cleanById(dataHome, project, request.taskId, how, wording);
  const { jobs, damaged } = await projectTaskList(dataHome, project);
  const lines = [];
  for (const job of jobs.filter((each) => isTerminal(each.state)))
    lines.push(await cleanOne(dataHome, job, how, wording));
  for (const job of damaged) lines.push(await cleanDamagedJob(dataHome, job, how, wording));
  return lines.length ? lines.join('\n') : 'No ended tasks to clean up.';
}

function cleanHow(request: CleanupRequest): CleanHow {
  const how = {
    keepBranch: request.keepBranch ?? false,
    discard: request.discard ?? false,
    force: request.force ?? false,
  };
  if (how.force && !how.discard) throw new UserError('force goes with discard: pass both.');
  if (how.discard && request.allFinished) {
    throw new UserError(
      'discard throws one task’s work away: name it with task_id, not all_finished.',
    );
  }
  if (how.discard && how.keepBranch) {
    throw new UserError('discard deletes the task’s branch and keep_branch keeps it: pass one.');
  }
  return how;
}

async function cleanById(
  dataHome: string,
  project: string,
  id: string,
  how: CleanHow,
  wording: Wording,
): Promise<string> {
  let job: JobFile;
  try {
    job = await getTask(dataHome, id, wording);
  } catch (error) {
    if (!(error instanceof DamagedJobError)) throw error;
    const damaged = await locateDamagedTask(dataHome, project, error);
    return cleanDamaged(dataHome, damaged, how.keepBranch);
  }
  const resultDamage = damagedResult(dataHome, job);
  if (resultDamage) return cleanOne(dataHome, job, how, wording, { isResultDamaged: true });
  return cleanOne(dataHome, job, how, wording);
}

/** A task whose result.json alone is damaged is cleaned like any ended task, without reading it. */
function cleanDamagedJob(
  dataHome: string,
  job: DamagedJob,
  how: CleanHow,
  wording: Wording,
): Promise<string> {
  return job.job && isTerminal(job.job.state)
    ? cleanOne(dataHome, job.job, how, wording, { isResultDamaged: true })
    : cleanDamaged(dataHome, job, how.keepBranch);
}

/**
 * The attempts of a task: a loser's worktree and branch (if its settle could not remove them)
 * and every attempt's files; the chosen one's worktree and branch are the task's own.
 */
async function cleanAttempts(dataHome: string, job: JobFile): Promise<void> {
  for (const ref of job.attempts ?? []) {
    const attempt = tryReadJob(dataHome, ref.id);
    await endTaskProcesses(dataHome, attempt ?? { id: ref.id });
    if (attempt && attempt.branch !== job.branch) {
      await removeAttemptWorktree(dataHome, attempt).catch(() => undefined);
    }
    if (attempt) await removeRunnerFolder(dataHome, attempt);
    rmSync(jobDir(dataHome, ref.id), { recursive: true, force: true });
  }
}

/**
 * An in-place task's files: put back from the snapshot when discarding, else kept as the task
 * left them (the snapshot goes with the job's folder). Returns the note for the cleanup line.
 */
async function settleInPlace(job: JobFile, how: CleanHow, wording: Wording): Promise<string> {
  if (job.isolation !== 'none') return '';
  if (!how.discard) {
    return job.snapshot ? `; its changes in ${job.workdir} are kept (the snapshot is removed)` : '';
  }
  if (!job.snapshot) {
    throw new UserError(
      `${job.id} worked in place with no snapshot (it started before delegate took them), so there is nothing to put back: clean it up without discard.`,
    );
  }
  const restored = await restoreSnapshot(job.snapshot.dir, {
    force: how.force,
    forceHow: wording.discard(job.id, true),
  });
  return `; ${restored}`;
}

function tryReadJob(dataHome: string, id: string): JobFile | undefined {
  try {
    return readJob(dataHome, id);
  } catch {
    return undefined;
  }
}

async function cleanOne(
  dataHome: string,
  job: JobFile,
  how: CleanHow,
  wording: Wording,
  { isResultDamaged = false } = {},
): Promise<string> {
  if (!isTerminal(job.state)) {
    throw new UserError(
      `${job.id} is ${job.state}; cancel it with ${wording.cancel(job.id)} before cleaning it up.`,
    );
  }
  // Its work is salvaged first: cleaning up while the task's end still commits would race it.
  if (!isResultDamaged) await ensureResult(dataHome, job);
  // Its worker may still be exiting past the task's end (settling attempts, closing its sandbox).
  await endTaskProcesses(dataHome, job);
  // Put back before anything goes: a refused restore leaves the task as it was.
  let note = await settleInPlace(job, how, wording);
  await cleanAttempts(dataHome, job);
  if (job.isolation === 'worktree' && job.repoDir && job.branch && job.worktreePath) {
    const removed = await removeWorktree({
      dataHome,
      repoDir: job.repoDir,
      ...(job.git ? { commonDir: job.git.commonDir } : {}),
      worktreePath: job.worktreePath,
      branch: job.branch,
      keepBranch: how.keepBranch,
      discardBranch: how.discard,
      ...(job.uncommittedAtStart && job.baseCommit ? { snapshotBase: job.baseCommit } : {}),
    });
    // No note and not deleted: the branch was gone already (a task that changed nothing).
    note += removed.branchDeleted
      ? `; branch ${job.branch} deleted`
      : removed.note
        ? `; branch ${job.branch} kept (${removed.note})`
        : `; branch ${job.branch} already removed`;
  }
  if (job.runner) {
    const left = await removeRunnerFolder(dataHome, job);
    note += left
      ? `; its folder ${job.runner.taskDir} on runner ${job.runner.name} is left (${left})`
      : `; its folder on runner ${job.runner.name} removed`;
  }
  rmSync(jobDir(dataHome, job.id), { recursive: true, force: true });
  return `${job.id}: cleaned up${note}`;
}
