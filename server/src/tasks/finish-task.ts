import { join } from 'node:path';
import { withFileLock } from '../util/file-lock.ts';
import { writeFileAtomic } from '../util/atomic-write.ts';
import { readJsonFile } from '../util/read-json.ts';
import { errorMessage } from '../util/user-error.ts';
import type { TaskState } from '../store/job-file.ts';
import { neutralizeTampering, repositoryDamage } from './git-integrity.ts';
import { killTask } from './task-processes.ts';
import { billedToTask } from '../calls/ledger.ts';
import { noteOutcome, type OutcomeRecord } from '../calls/outcomes.ts';
import { taskKind } from '../calls/task-kind.ts';
import { objectProblem } from '../store/job-damage.ts';
import {
  appendEvent,
  DamagedJobError,
  isTerminal,
  jobDir,
  readJob,
  updateJob,
} from '../store/job-store.ts';
import { describeChanges, mergeInstructions, recordStartedTask, snapshotWork } from './worktree.ts';
import { removeWorktree, takeCommitsOffBranch } from './worktree-lifecycle.ts';
import { keysInWork } from './keys-in-work.ts';
import type {
  InPlaceSnapshot,
  JobFile,
  RecordedGit,
  ReviewFacts,
  VerificationFacts,
} from '../store/job-file.ts';
import { listedChanges, measureChanges, type InPlaceChanges } from './in-place-changes.ts';

/** `jobs/<id>/result.json`: what task_result shows, computed once the task has ended. */
export interface TaskResultFile {
  state: TaskState;
  verdict?: 'passed' | 'failed' | 'unverified';
  summary: string;
  error?: string;
  verification?: VerificationFacts;
  /** Whether the worker's commands and the test command ran in the OS sandbox. */
  sandboxed?: boolean;
  /** Test runs that failed and went back to the worker before the final one. */
  failedAttempts?: VerificationFacts[];
  review?: ReviewFacts;
  filesChanged: Array<{ status: string; path: string }>;
  diffstat: string;
  patchPath?: string;
  patchBytes: number;
  commit?: string;
  mergeHow?: string;
  /** What was removed at once because the task changed nothing. */
  cleanedUp?: string;
  salvageError?: string;
  /** A task run as several attempts: one line per attempt (the result above is the chosen one's). */
  attempts?: AttemptLine[];
  /** An in-place task: its changes were measured on disk against the snapshot from its start. */
  inPlace?: {
    workdir: string;
    snapshotDir: string;
    /** What the snapshot did not hold (git metadata, delegate's data), so was not compared. */
    leftOut: string[];
    /** The workdir holds too many entries now: the comparison stopped before the end. */
    isCut?: boolean;
  };
}

/** One line of task_result per attempt. */
export interface AttemptLine {
  id: string;
  profile: string;
  state: JobFile['state'];
  verdict?: JobFile['verdict'];
  review?: string;
  costUsd: number;
  /** Won, chosen without winning, or why it lost. */
  outcome: string;
  /** A loser's work, kept after its worktree and branch went. */
  patchPath?: string;
}

export interface Outcome {
  state: Extract<TaskState, 'done' | 'failed' | 'cancelled' | 'timeout' | 'lost'>;
  summary?: string;
  error?: string;
  verification?: VerificationFacts;
  failedAttempts?: VerificationFacts[];
  review?: ReviewFacts;
}

/**
 * Stops a task that is still running for `why`: the reason is recorded first (a look that finds
 * the worker dead meanwhile ends the task cancelled for it, not lost), then every process of
 * the task is killed, then it ends cancelled with its work salvaged. Returns the pids still
 * stopping (see {@link killTask}).
 */
export async function stopTask(dataHome: string, id: string, why: string): Promise<number[]> {
  const job = await updateJob(dataHome, id, (current) =>
    isTerminal(current.state) ? undefined : { stopRequested: why },
  );
  if (isTerminal(job.state)) return [];
  await killTask(dataHome, job);
  // Children started after the first look are in the job file now; kill those too.
  const stopping = await killTask(dataHome, readJob(dataHome, id));
  await catchUpCost(dataHome, id);
  await finishTask(dataHome, id, { state: 'cancelled', error: why });
  return stopping;
}

/**
 * A worker killed between billing a call and writing it to job.json (its recorder writes cost
 * with its progress, a moment later): the ledger has the call, and the task's cost is taken from it.
 */
export async function catchUpCost(dataHome: string, id: string): Promise<void> {
  await updateJob(dataHome, id, (current) => {
    const billed = billedToTask(dataHome, id, current.createdAt);
    return billed > current.costUsd ? { costUsd: billed } : undefined;
  });
}

/**
 * Ends a task once: the first caller to move it to a terminal state wins (the worker finishing,
 * or the server cancelling or finding it dead); then its work is salvaged to the branch and
 * patch, and result.json is written. Returns undefined when the task had already ended.
 * A task whose worker tampered with git metadata or damaged the repository ends `failed`
 * whatever it reported, and tampered work is never salvaged (git would act on the worker's
 * metadata); the worktree stays for inspection.
 */
export async function finishTask(
  dataHome: string,
  id: string,
  reported: Outcome,
): Promise<JobFile | undefined> {
  const before = readJob(dataHome, id);
  if (isTerminal(before.state)) return undefined;
  // An in-place task's changes on disk, measured once: searched for keys, then listed.
  const inPlace = before.snapshot
    ? await measureChanges(before.snapshot.dir).catch((error: unknown) => errorOf(error))
    : undefined;
  const found = await inspectWork(dataHome, before, inPlace);
  // Work that must not reach a branch is off it before anyone can see the task ended: a
  // supervisor (or a user) who merges the branch the moment the state turns gets none of it.
  const offBranch = isUnsafe(found)
    ? await takeCommitsOffBranch(dataHome, before).catch((error: unknown) => errorMessage(error))
    : undefined;
  const gitProblems = found && offBranch ? { ...found, offBranch } : found;
  const outcome = withGitProblems(reported, gitProblems, before);
  let won = false;
  const verdict =
    outcome.state !== 'done'
      ? undefined
      : !outcome.verification
        ? 'unverified'
        : outcome.verification.exitCode === 0
          ? 'passed'
          : 'failed';
  const job = await updateJob(dataHome, id, (current) => {
    if (isTerminal(current.state)) return undefined;
    won = true;
    return {
      state: outcome.state,
      endedAt: new Date().toISOString(),
      question: undefined,
      ...(verdict ? { verdict } : {}),
      ...(outcome.summary !== undefined ? { summary: outcome.summary } : {}),
      ...(outcome.error !== undefined ? { error: outcome.error } : {}),
      ...(outcome.verification ? { verification: outcome.verification } : {}),
      ...(outcome.failedAttempts?.length ? { failedAttempts: outcome.failedAttempts } : {}),
      ...(outcome.review ? { review: outcome.review } : {}),
      ...(gitProblems ? { gitProblems } : {}),
    };
  });
  if (!won) return undefined;
  appendEvent(
    dataHome,
    id,
    'state',
    `${outcome.state}${verdict ? ` (${verdict})` : ''}${outcome.error ? `: ${outcome.error}` : ''}`,
  );
  await ensureResult(dataHome, job, inPlace);
  const learned = verifiedOutcome(job);
  if (learned) await noteOutcome(dataHome, learned);
  return job;
}

/**
 * What the scoreboard learns from an ended task (an attempt or a rung is one too): passed when
 * its tests passed and its reviewer passed it, failed when either failed or the work ended in
 * an error; unverified without tests or reviewer, or when someone else stopped it. A task that
 * never ran on a profile of its own (the task over its attempts) teaches nothing.
 */
export function verifiedOutcome(job: JobFile): OutcomeRecord | undefined {
  if (!job.profile || !job.startedAt) return undefined;
  const isTested = job.testCommand !== undefined;
  const isReviewed = Boolean(job.definitionOfDone && job.reviewProfile);
  const by = [isTested ? 'tests' : '', isReviewed ? 'review' : ''].filter(Boolean).join('+');
  const verdict: { passed: boolean | null; by: string } =
    !isTested && !isReviewed
      ? { passed: null, by: 'none' }
      : job.state === 'cancelled' || job.state === 'lost'
        ? { passed: null, by: 'stopped' }
        : job.state !== 'done'
          ? { passed: false, by: 'error' }
          : {
              passed:
                (!isTested || job.verdict === 'passed') &&
                (!isReviewed ||
                  job.review?.verdict === 'pass' ||
                  (job.review?.verdict === 'error' && isTested)),
              by,
            };
  const ended = Date.parse(job.endedAt ?? '') || Date.now();
  return {
    ts: new Date(ended).toISOString(),
    work: 'task',
    project: job.project,
    profile: job.profile,
    kind: taskKind(job.task, job.agent?.name),
    ...verdict,
    costUsd: job.costUsd,
    ms: Math.max(0, ended - Date.parse(job.startedAt)),
    fixRounds: job.failedAttempts?.length ?? 0,
    taskId: job.id,
    ...(job.attemptOf ? { attemptOf: job.attemptOf } : {}),
  };
}

const errorOf = (error: unknown): Error =>
  error instanceof Error ? error : new Error(String(error));

/**
 * What the worker's work must not carry: git metadata it made or changed and damage to the
 * repository (in a repository), and keys of this machine (everywhere); undefined when all is well.
 */
async function inspectWork(
  dataHome: string,
  job: JobFile,
  inPlace: InPlaceChanges | Error | undefined,
): Promise<JobFile['gitProblems']> {
  const { tampered, damaged } = job.git
    ? await checkGit(dataHome, job, job.git)
    : { tampered: [], damaged: [] };
  // The keys this process could send (the worker's, the server's or the CLI's environment).
  const keys = await keysInWork(job, dataHome, process.env, inPlace);
  return tampered.length + damaged.length + keys.length > 0
    ? { tampered, damaged, ...(keys.length ? { keys } : {}) }
    : undefined;
}

/** What the worker did to git metadata and the repository. */
async function checkGit(
  dataHome: string,
  job: JobFile,
  recorded: RecordedGit,
): Promise<{ tampered: string[]; damaged: string[] }> {
  const tampered = await neutralizeTampering({
    recorded,
    taskDir: job.worktreePath ?? job.workdir,
    shapesAtStart:
      job.gitShapesAtStart ??
      Object.fromEntries((job.nestedGitAtStart ?? []).map((path) => [path, ''])),
    isDisposable: job.isolation === 'worktree',
    quarantineDir: join(jobDir(dataHome, job.id), 'quarantine'),
  });
  // Under the sandbox the repository is read-only to the worker: the history walk is skipped.
  const damaged = await repositoryDamage(recorded, job.sandboxed !== true, dataHome);
  return { tampered, damaged };
}

/** Work that must not reach a branch: git metadata the worker made, or a key. */
function isUnsafe(problems: JobFile['gitProblems']): boolean {
  return Boolean(problems?.tampered.length || problems?.keys?.length);
}

function withGitProblems(
  outcome: Outcome,
  problems: JobFile['gitProblems'],
  job: JobFile,
): Outcome {
  if (!problems) return outcome;
  const kept = `The work was not salvaged${job.worktreePath ? `; the worktree ${job.worktreePath} is kept for inspection` : ''}`;
  const what = [
    ...(problems.keys?.length
      ? [`the worker's changes contain a key: ${problems.keys.join('; ')}. ${kept}`]
      : []),
    ...(problems.tampered.length
      ? [`git metadata in the worker's changes: ${problems.tampered.join('; ')}. ${kept}`]
      : []),
    ...(problems.damaged.length
      ? [`the task damaged the repository ${job.git?.commonDir}: ${problems.damaged.join('; ')}`]
      : []),
  ].join('. ');
  const error = outcome.error ? `${what}. Also: ${outcome.error}` : what;
  return { ...outcome, state: outcome.state === 'done' ? 'failed' : outcome.state, error };
}

/**
 * result.json of an ended task, salvaging its work first when that has not happened yet. The
 * worker and the server may both get here at once: one salvages, the other waits and reads.
 * `inPlace`: an in-place task's changes as its end measured them (measured again when absent).
 */
export async function ensureResult(
  dataHome: string,
  job: JobFile,
  inPlace?: InPlaceChanges | Error,
): Promise<TaskResultFile> {
  const path = join(jobDir(dataHome, job.id), 'result.json');
  const existing = readResultFile(job, path);
  if (existing) return existing;
  return withFileLock(
    join(jobDir(dataHome, job.id), 'result.lock'),
    () => writeResult(dataHome, job, path, inPlace),
    {
      timeoutMs: SALVAGE_TIMEOUT_MS,
    },
  );
}

const SALVAGE_TIMEOUT_MS = 300_000;

/** result.json when it is there; a damaged one is reported as such (DamagedJobError). */
function readResultFile(job: JobFile, path: string): TaskResultFile | undefined {
  const read = readJsonFile(path);
  if (read === undefined) return undefined;
  const damaged = (problem: string) =>
    new DamagedJobError({ id: job.id, file: path, problem, job });
  if ('problem' in read) throw damaged(read.problem);
  const notObject = objectProblem(read.value);
  if (notObject) throw damaged(notObject);
  const result = read.value as TaskResultFile;
  return { ...result, filesChanged: Array.isArray(result.filesChanged) ? result.filesChanged : [] };
}

async function writeResult(
  dataHome: string,
  job: JobFile,
  path: string,
  inPlace: InPlaceChanges | Error | undefined,
): Promise<TaskResultFile> {
  const existing = readResultFile(job, path);
  if (existing) return existing;
  const result: TaskResultFile = {
    state: job.state,
    ...(job.verdict ? { verdict: job.verdict } : {}),
    summary: job.summary ?? '',
    ...(job.error ? { error: job.error } : {}),
    ...(job.verification ? { verification: job.verification } : {}),
    ...(job.sandboxed !== undefined ? { sandboxed: job.sandboxed } : {}),
    ...(job.failedAttempts?.length ? { failedAttempts: job.failedAttempts } : {}),
    ...(job.review ? { review: job.review } : {}),
    filesChanged: [],
    diffstat: '',
    patchBytes: 0,
    ...(await salvage(dataHome, job, inPlace)),
  };
  await writeFileAtomic(path, `${JSON.stringify(result, null, 2)}\n`);
  return result;
}

async function salvage(
  dataHome: string,
  job: JobFile,
  inPlace: InPlaceChanges | Error | undefined,
): Promise<Partial<TaskResultFile>> {
  if (job.snapshot) return measureInPlace(job.workdir, job.snapshot, inPlace);
  if (isUnsafe(job.gitProblems)) {
    const why = job.gitProblems?.keys?.length
      ? 'the work holds a key'
      : 'the git metadata was tampered with';
    // Taken off as the task ended; looked at again for a job that ended without that step.
    const off =
      job.gitProblems?.offBranch ??
      (await takeCommitsOffBranch(dataHome, job).catch((error: unknown) => errorMessage(error)));
    return { salvageError: `not salvaged: ${why}${off ? `; ${off}` : ''}` };
  }
  try {
    const recorded = job.git ?? (await recordStartedTask(job));
    if (!recorded) return {};
    if (job.isolation === 'worktree' && job.baseCommit && job.repoDir && job.branch) {
      const patchPath = join(jobDir(dataHome, job.id), 'patch.diff');
      const snapshot = await snapshotWork({
        repository: recorded,
        baseCommit: job.baseCommit,
        message: `delegate ${job.id}: ${job.task.split('\n')[0]?.slice(0, 60) ?? ''}`,
        patchPath,
      });
      // Nothing to review or merge: the worktree and its branch go at once (task_cleanup
      // still removes the job's files).
      if (snapshot.commit === undefined) {
        await removeWorktree({
          dataHome,
          repoDir: job.repoDir,
          commonDir: recorded.commonDir,
          worktreePath: recorded.workTree,
          branch: job.branch,
          ...(job.uncommittedAtStart ? { snapshotBase: job.baseCommit } : {}),
        });
        return {
          ...snapshot,
          cleanedUp: `nothing changed: worktree and branch ${job.branch} removed`,
        };
      }
      return {
        ...snapshot,
        commit: snapshot.commit,
        patchPath,
        mergeHow: mergeInstructions({
          repoDir: job.repoDir,
          branch: job.branch,
          baseCommit: job.baseCommit,
          patchPath,
          isFromUncommitted: job.uncommittedAtStart !== undefined,
        }),
      };
    }
    return { ...(await describeChanges(recorded)), patchBytes: 0 };
  } catch (error) {
    return { salvageError: errorMessage(error) };
  }
}

/** An in-place task's files changed, from the disk against its snapshot (never from git). */
async function measureInPlace(
  workdir: string,
  snapshot: InPlaceSnapshot,
  measuredAtEnd: InPlaceChanges | Error | undefined,
): Promise<Partial<TaskResultFile>> {
  const inPlace = { workdir, snapshotDir: snapshot.dir, leftOut: snapshot.leftOut };
  try {
    if (measuredAtEnd instanceof Error) throw measuredAtEnd;
    const measured = measuredAtEnd ?? (await measureChanges(snapshot.dir));
    return {
      filesChanged: listedChanges(measured.changes),
      inPlace: { ...inPlace, ...(measured.isCut ? { isCut: true } : {}) },
    };
  } catch (error) {
    return {
      inPlace,
      salvageError: `the files changed could not be measured against the snapshot: ${errorMessage(error)}`,
    };
  }
}
