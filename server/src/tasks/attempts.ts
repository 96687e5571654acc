/**
 * A task run as several attempts: each attempt is a task of its own (own worker, worktree,
 * branch, pool slot, share of the budget) whose job names the task in `attemptOf`; the task
 * itself has no worker and is what the supervisor sees. Whoever ends an attempt (its worker, a
 * cancel, the server finding it dead) then settles the task: once an attempt wins, or all have
 * ended, the others are stopped, the losers' worktrees and branches go (their patches stay in
 * their job folders), the chosen attempt's branch becomes `delegate/<task id>`, and the task
 * ends with the chosen attempt's result and one line per attempt. Settling again changes
 * nothing, so any reader may do it: a settler killed half-way is finished by the next look.
 */
import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { withFileLock } from '../util/file-lock.ts';
import { writeFileAtomic } from '../util/atomic-write.ts';
import { errorMessage } from '../util/user-error.ts';
import { appendEvent, isTerminal, jobDir, readJob, updateJob } from '../store/job-store.ts';
import { isWorkerAlive } from './task-processes.ts';
import type { JobFile } from '../store/job-file.ts';
import { ensureResult, stopTask, type AttemptLine, type TaskResultFile } from './finish-task.ts';
import { mergeInstructions, removeRunnerFolder } from './worktree.ts';
import { removeWorktree, renameBranch } from './worktree-lifecycle.ts';
import { statusLine } from './task-format.ts';
import { formatUsd } from '../util/format-usd.ts';
import { plural } from '../util/plural.ts';

/** Attempt `n` (from 1) of task `id`: a plain task id, so every id check and pattern takes it. */
export function attemptId(id: string, n: number): string {
  return `${id}a${n}`;
}

/** How long a settle waits for another one in progress (stopping and salvaging take a while). */
const SETTLE_WAIT_MS = 600_000;

/**
 * Settles the task `id` after one of its attempts changed: the live view while none has won,
 * the end once one has or all have ended. `waitMs`: how long to wait for a settle in progress
 * elsewhere (a reader passes little, and sees the task as it is).
 */
export async function settleAttempts(
  dataHome: string,
  id: string,
  waitMs = SETTLE_WAIT_MS,
  climb?: Climb,
): Promise<void> {
  // A task whose file never got written (a start that crashed): its attempts stand alone.
  if (!existsSync(join(jobDir(dataHome, id), 'job.json'))) return;
  await withFileLock(
    join(jobDir(dataHome, id), 'settle.lock'),
    () => settleNow(dataHome, id, climb),
    { timeoutMs: waitMs },
  );
}

/**
 * Starts a ladder's next rung (its worker). Only the worker whose rung just ended passes one:
 * it is alive to do it, so a rung never starts twice.
 */
export type Climb = (rung: JobFile) => Promise<unknown>;

async function settleNow(dataHome: string, id: string, climb: Climb | undefined): Promise<void> {
  const task = readJob(dataHome, id);
  if (isTerminal(task.state) || !task.attempts) return;
  let attempts = task.attempts.map((attempt) => readJob(dataHome, attempt.id));
  const winner = task.winner ?? pickWinner(task, attempts);
  let ladderStop: string | undefined;
  if (task.attemptStrategy === 'ladder' && !winner && !task.stopRequested) {
    const step = ladderStep(task, attempts);
    if (step.type === 'climb' && climb) {
      await climbTo(dataHome, task, step.next, attempts, climb);
      await showAttempts(
        dataHome,
        task,
        attempts.map((attempt) => readJob(dataHome, attempt.id)),
      );
      return;
    }
    const isClimbing = step.type === 'climb' && isWorkerAlive(dataHome, step.last);
    if (step.type === 'wait' || isClimbing) {
      // The worker that ended the rung climbs; a look meanwhile only shows the task.
      await showAttempts(dataHome, task, attempts);
      return;
    }
    ladderStop =
      step.type === 'climb'
        ? `the ladder stopped after ${step.last.id} (${step.last.state}): its worker exited before starting ${step.next.id}`
        : step.why;
  }
  const hasEnded = attempts.every((attempt) => isTerminal(attempt.state));
  if (!winner && !hasEnded && !task.stopRequested && !ladderStop) {
    await showAttempts(dataHome, task, attempts);
    return;
  }
  if (winner && !task.winner) {
    await updateJob(dataHome, id, () => ({ winner }));
    appendEvent(
      dataHome,
      id,
      'attempt',
      `${winner} ${task.attemptStrategy === 'ladder' ? 'passed' : 'won'}`,
    );
  }
  const why =
    task.stopRequested ??
    ladderStop ??
    (task.attemptStrategy === 'ladder' ? `not climbed: ${winner} passed` : `${winner} won first`);
  for (const attempt of attempts) {
    if (!isTerminal(attempt.state)) await stopTask(dataHome, attempt.id, why);
  }
  attempts = task.attempts.map((attempt) => readJob(dataHome, attempt.id));
  await endTask(dataHome, readJob(dataHome, id), attempts, winner, ladderStop);
}

type LadderStep =
  | { type: 'wait' }
  | { type: 'climb'; last: JobFile; next: JobFile }
  | { type: 'stop'; why: string };

/**
 * Where a ladder with no passing rung stands: a rung still runs (wait); the last one ended and
 * the next has not started (climb, while budget is left); or every rung has run (stop).
 */
function ladderStep(task: JobFile, attempts: JobFile[]): LadderStep {
  const rungs = [...attempts].sort((a, b) => (a.rung ?? 0) - (b.rung ?? 0));
  const nextIndex = rungs.findIndex((rung) => rung.state === 'queued' && !rung.worker);
  if (nextIndex < 0) {
    return rungs.every((rung) => isTerminal(rung.state))
      ? { type: 'stop', why: 'no rung passed' }
      : { type: 'wait' };
  }
  const earlier = rungs.slice(0, nextIndex);
  const last = earlier.at(-1);
  if (!last || earlier.some((rung) => !isTerminal(rung.state))) return { type: 'wait' };
  const left = rungBudget(task, earlier);
  if (left !== undefined && left <= 0) {
    return { type: 'stop', why: `the budget is spent after ${last.id}: no rung left to climb to` };
  }
  return { type: 'climb', last, next: rungs[nextIndex]! };
}

/** What a rung may spend: the task's budget less what the rungs before it cost. */
function rungBudget(task: JobFile, earlier: JobFile[]): number | undefined {
  if (task.budgetUsd === undefined) return undefined;
  return task.budgetUsd - sum(earlier.map((rung) => rung.costUsd));
}

/**
 * Readies the next rung — what the rungs before it did and why it failed goes into its task,
 * what they left of the budget becomes its cap — and starts its worker.
 */
async function climbTo(
  dataHome: string,
  task: JobFile,
  next: JobFile,
  attempts: JobFile[],
  climb: Climb,
): Promise<void> {
  const earlier = attempts.filter((rung) => (rung.rung ?? 0) < (next.rung ?? 0));
  const left = rungBudget(task, earlier);
  await updateJob(dataHome, next.id, () => ({
    task: `${task.task}\n\n${earlierRungsNote(earlier)}`,
    ...(left === undefined ? {} : { budgetUsd: left }),
  }));
  const profile = task.attempts?.find((ref) => ref.id === next.id)?.profile ?? next.profile;
  appendEvent(
    dataHome,
    task.id,
    'attempt',
    `climbing to ${next.id} (${profile})${left === undefined ? '' : `, ${formatUsd(left)} left`}`,
  );
  await climb(readJob(dataHome, next.id));
}

/** The rungs' failure, told to the next one: the tests' output, the reviewer, their notes. */
const NOTE_TAIL_CHARS = 3_000;

function earlierRungsNote(earlier: JobFile[]): string {
  const parts = earlier.map((rung) => {
    const lines = [
      `- Rung ${rung.rung} (profile ${rung.profile ?? '?'}) ended ${rung.state}${rung.verdict ? `, tests ${rung.verdict}` : ''}.`,
    ];
    if (rung.error) lines.push(`  Error: ${rung.error.slice(0, 500)}`);
    const facts = rung.verification;
    if (facts && facts.exitCode !== 0) {
      lines.push(
        `  \`${facts.command}\` exited ${facts.exitCode ?? '(none)'}${facts.timedOut ? ' (timed out)' : ''}; its output (tail):`,
        '```',
        facts.outputTail.slice(-NOTE_TAIL_CHARS),
        '```',
      );
    }
    if (rung.review && rung.review.verdict !== 'pass') {
      lines.push(
        `  The reviewer said ${rung.review.verdict}: ${rung.review.notes.slice(0, 1_000)}`,
      );
    }
    if (rung.summary) lines.push(`  Its own notes: ${rung.summary.slice(0, 1_000)}`);
    return lines.join('\n');
  });
  return [
    'Earlier workers tried this task and their work did not pass; it was set aside and you start again from the same base. What they left:',
    ...parts,
    'Learn from their failure: find the cause before you change code.',
  ].join('\n');
}

/**
 * Whether an attempt's work qualifies: it ended done, its tests passed (or there are none), and
 * the reviewer passed it when the task has a definition of done and a reviewer.
 */
function qualifies(task: JobFile, attempt: JobFile): boolean {
  if (attempt.state !== 'done') return false;
  const isTested = task.testCommand ? attempt.verdict === 'passed' : true;
  const isReviewed =
    !task.definitionOfDone || !attempt.reviewProfile || attempt.review?.verdict === 'pass';
  return isTested && isReviewed;
}

/**
 * `first_pass`: the first attempt to end qualifying. `best_review`: once every attempt has
 * ended, the best ranked if it qualifies.
 */
function pickWinner(task: JobFile, attempts: JobFile[]): string | undefined {
  if (task.attemptStrategy === 'best_review') {
    if (!attempts.every((attempt) => isTerminal(attempt.state))) return undefined;
    const best = ranked(attempts)[0];
    return best && qualifies(task, best) ? best.id : undefined;
  }
  return attempts
    .filter((attempt) => qualifies(task, attempt))
    .sort((a, b) => (a.endedAt ?? '').localeCompare(b.endedAt ?? ''))[0]?.id;
}

const VERDICT_RANK = { passed: 2, unverified: 1, failed: 0 } as const;
const REVIEW_RANK = { pass: 3, unclear: 2, fail: 1, error: 0 } as const;

/**
 * Best first: ended done, then the tests' verdict, then the reviewer's, then one that changed
 * something, then the cheaper, then the earlier to end.
 */
function ranked(attempts: JobFile[]): JobFile[] {
  const score = (job: JobFile) => [
    job.state === 'done' ? 1 : 0,
    job.verdict ? VERDICT_RANK[job.verdict] : -1,
    job.review ? REVIEW_RANK[job.review.verdict] : -1,
    job.filesTouched.length > 0 ? 1 : 0,
    -job.costUsd,
  ];
  return [...attempts].sort((a, b) => {
    const [left, right] = [score(a), score(b)];
    const differs = left.findIndex((value, index) => value !== right[index]);
    if (differs >= 0) return (right[differs] ?? 0) - (left[differs] ?? 0);
    return (a.endedAt ?? '').localeCompare(b.endedAt ?? '');
  });
}

/**
 * `3 attempts: 1 passed · 1 failed · 1 running`, in that order of interest; a ladder's rungs in
 * order: `ladder: a1 failed → a2 running → a3 queued`.
 */
export function attemptsSummary(attempts: JobFile[]): string {
  if (attempts.some((attempt) => attempt.rung !== undefined)) {
    const rungs = [...attempts].sort((a, b) => (a.rung ?? 0) - (b.rung ?? 0));
    const word = (rung: JobFile) => (rung.state === 'done' ? (rung.verdict ?? 'done') : rung.state);
    return `ladder: ${rungs.map((rung) => `${rung.id} ${rung.profile ?? ''} ${word(rung)}`).join(' → ')}`;
  }
  const counts = new Map<string, number>();
  for (const attempt of attempts) {
    const word = attempt.state === 'done' ? (attempt.verdict ?? 'done') : attempt.state;
    counts.set(word, (counts.get(word) ?? 0) + 1);
  }
  const parts = [...counts].map(([word, count]) => `${count} ${word}`);
  return `${plural(attempts.length, 'attempt')}: ${parts.join(' · ')}`;
}

/**
 * The task's job.json while its attempts run, so every reader (status line, monitor, briefing)
 * sees them as one task: waiting for an answer when any attempt is (its question tagged with the
 * attempt), else running when any runs; cost and steps are the attempts' together.
 */
async function showAttempts(dataHome: string, task: JobFile, attempts: JobFile[]): Promise<void> {
  const asking = attempts.find((attempt) => attempt.state === 'needs_input');
  const isRunning = attempts.some((attempt) => attempt.state === 'running');
  const profiles = new Map(task.attempts?.map((ref) => [ref.id, ref.profile]));
  await updateJob(dataHome, task.id, (current) => {
    if (isTerminal(current.state)) return undefined;
    const view: Partial<JobFile> = {
      state: asking ? 'needs_input' : isRunning ? 'running' : current.state,
      question: asking
        ? `[attempt ${asking.id} · ${profiles.get(asking.id)}] ${asking.question ?? ''}`
        : undefined,
      activity: attemptsSummary(attempts),
      step: Math.max(0, ...attempts.map((attempt) => attempt.step)),
      costUsd: sum(attempts.map((attempt) => attempt.costUsd)),
      lastEventAt: latest(attempts.map((attempt) => attempt.lastEventAt)) ?? current.lastEventAt,
      ...(current.startedAt ? {} : startedAt(attempts)),
    };
    // Every look settles: the file is written only when the view moved.
    const isSame = Object.entries(view).every(
      ([key, value]) => current[key as keyof JobFile] === value,
    );
    return isSame ? undefined : view;
  });
}

function startedAt(attempts: JobFile[]): Partial<JobFile> {
  const first = attempts
    .map((attempt) => attempt.startedAt)
    .filter((time): time is string => time !== undefined)
    .sort()[0];
  return first ? { startedAt: first } : {};
}

function latest(times: string[]): string | undefined {
  return [...times].sort().at(-1);
}

function sum(values: number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

/**
 * Ends the task with the chosen attempt (the winner, else the best ranked): its branch becomes
 * `delegate/<task id>`, its result the task's; the losers' worktrees and branches go.
 */
async function endTask(
  dataHome: string,
  task: JobFile,
  attempts: JobFile[],
  winner: string | undefined,
  ladderStop?: string,
): Promise<void> {
  // A rung never climbed to has no work to show.
  const ran = attempts.filter((attempt) => attempt.rung === undefined || attempt.startedAt);
  const chosen =
    attempts.find((attempt) => attempt.id === winner) ?? ranked(ran.length ? ran : attempts)[0];
  if (!chosen) return;
  const results = new Map<string, TaskResultFile>();
  for (const attempt of attempts) results.set(attempt.id, await resultOf(dataHome, attempt));
  const lines: AttemptLine[] = [];
  for (const attempt of attempts) {
    const result = results.get(attempt.id)!;
    const isChosen = attempt.id === chosen.id;
    if (!isChosen) await discardAttempt(dataHome, task.id, attempt);
    const line = attemptLine(task, attempt, result, { isChosen, winner });
    // A ladder's lines stay in rung order; a race's put the chosen one first.
    if (isChosen && task.attemptStrategy !== 'ladder') lines.unshift(line);
    else lines.push(line);
  }
  const place = await takeChosen(dataHome, task, chosen, results.get(chosen.id)!);
  const won = winner !== undefined;
  const state = task.stopRequested ? 'cancelled' : won ? 'done' : chosen.state;
  const error = task.stopRequested
    ? task.stopRequested
    : won
      ? undefined
      : `${ladderStop ?? 'no attempt qualified'} (${attemptsSummary(attempts)}); the best ranked is shown: ${chosen.id}`;
  const chosenResult = results.get(chosen.id)!;
  const result: TaskResultFile = {
    ...chosenResult,
    ...place.result,
    state,
    ...(error
      ? { error: chosenResult.error ? `${error}. Its error: ${chosenResult.error}` : error }
      : {}),
    attempts: lines,
  };
  await writeFileAtomic(
    join(jobDir(dataHome, task.id), 'result.json'),
    `${JSON.stringify(result, null, 2)}\n`,
  );
  await updateJob(dataHome, task.id, (current) => {
    if (isTerminal(current.state)) return undefined;
    return {
      state,
      endedAt: new Date().toISOString(),
      question: undefined,
      activity: attemptsSummary(attempts),
      ...(chosen.verdict && state !== 'cancelled' ? { verdict: chosen.verdict } : {}),
      ...(chosen.summary !== undefined ? { summary: chosen.summary } : {}),
      ...(result.error ? { error: result.error } : {}),
      ...(chosen.verification ? { verification: chosen.verification } : {}),
      ...(chosen.failedAttempts ? { failedAttempts: chosen.failedAttempts } : {}),
      ...(chosen.review ? { review: chosen.review } : {}),
      ...(chosen.modelAnswered ? { modelAnswered: chosen.modelAnswered } : {}),
      ...(chosen.sandboxed !== undefined ? { sandboxed: chosen.sandboxed } : {}),
      ...(chosen.sandboxNote ? { sandboxNote: chosen.sandboxNote } : {}),
      step: chosen.step,
      filesTouched: chosen.filesTouched,
      costUsd: sum(attempts.map((attempt) => attempt.costUsd)),
      ...place.job,
    };
  });
  appendEvent(dataHome, task.id, 'state', `${state}: ${chosen.id} ${won ? 'won' : 'chosen'}`);
}

/** An attempt's result.json, salvaging it first when that has not happened yet. */
async function resultOf(dataHome: string, attempt: JobFile): Promise<TaskResultFile> {
  try {
    return await ensureResult(dataHome, attempt);
  } catch (error) {
    const message = errorMessage(error);
    return {
      state: attempt.state,
      summary: '',
      filesChanged: [],
      diffstat: '',
      patchBytes: 0,
      salvageError: message,
    };
  }
}

/**
 * Removes an attempt's worktree and its branch, unmerged commits and all (its patch is the
 * record); nothing to do for one placed nowhere.
 */
export async function removeAttemptWorktree(dataHome: string, attempt: JobFile): Promise<void> {
  if (!attempt.repoDir || !attempt.branch || !attempt.worktreePath) return;
  await removeWorktree({
    dataHome,
    repoDir: attempt.repoDir,
    ...(attempt.git ? { commonDir: attempt.git.commonDir } : {}),
    worktreePath: attempt.worktreePath,
    branch: attempt.branch,
    discardBranch: true,
  });
}

/** A loser's worktree, branch and runner folder go; its patch stays in its job folder. */
async function discardAttempt(dataHome: string, id: string, attempt: JobFile): Promise<void> {
  // Tampered git metadata: the worktree stays for inspection, as for any task.
  if (attempt.gitProblems?.tampered.length) return;
  const note = (what: string, why: string) =>
    appendEvent(dataHome, id, 'attempt', `${attempt.id}: ${what} not removed: ${why}`);
  await removeAttemptWorktree(dataHome, attempt).catch((error: unknown) =>
    note('worktree', errorMessage(error)),
  );
  const left = await removeRunnerFolder(dataHome, attempt);
  if (left) note(`its folder on runner ${attempt.runner?.name}`, left);
}

function attemptLine(
  task: JobFile,
  attempt: JobFile,
  result: TaskResultFile,
  { isChosen, winner }: { isChosen: boolean; winner: string | undefined },
): AttemptLine {
  const isUnclimbed =
    task.attemptStrategy === 'ladder' && attempt.state === 'cancelled' && !attempt.startedAt;
  const outcome = isUnclimbed
    ? (attempt.error ?? 'not climbed')
    : isChosen
      ? winner
        ? task.attemptStrategy === 'ladder'
          ? 'passed'
          : 'won'
        : 'best ranked (did not qualify)'
      : attempt.state === 'cancelled'
        ? `stopped: ${attempt.error ?? 'cancelled'}`
        : attempt.state !== 'done'
          ? `${attempt.state}: ${attempt.error ?? ''}`
          : !qualifies(task, attempt)
            ? attempt.verdict === 'failed'
              ? 'its tests failed'
              : `review ${attempt.review?.verdict ?? 'missing'}`
            : `ranked below ${winner}`;
  return {
    id: attempt.id,
    profile: task.attempts?.find((ref) => ref.id === attempt.id)?.profile ?? attempt.profile ?? '?',
    state: attempt.state,
    ...(attempt.verdict ? { verdict: attempt.verdict } : {}),
    ...(attempt.review ? { review: attempt.review.verdict } : {}),
    costUsd: attempt.costUsd,
    outcome,
    ...(!isChosen && result.patchPath && result.patchBytes > 0
      ? { patchPath: result.patchPath }
      : {}),
  };
}

/**
 * The chosen attempt's work becomes the task's: its branch is renamed `delegate/<task id>`, its
 * patch copied into the task's folder, and the task records the worktree (task_cleanup removes
 * it as any task's).
 */
async function takeChosen(
  dataHome: string,
  task: JobFile,
  chosen: JobFile,
  result: TaskResultFile,
): Promise<{ job: Partial<JobFile>; result: Partial<TaskResultFile> }> {
  const where: Partial<JobFile> = {
    ...(chosen.repoDir ? { repoDir: chosen.repoDir } : {}),
    ...(chosen.baseCommit ? { baseCommit: chosen.baseCommit } : {}),
    ...(chosen.uncommittedAtStart ? { uncommittedAtStart: chosen.uncommittedAtStart } : {}),
  };
  if (
    !result.commit ||
    !chosen.repoDir ||
    !chosen.branch ||
    !chosen.worktreePath ||
    !chosen.baseCommit
  ) {
    return { job: where, result: {} };
  }
  const branch = `delegate/${task.id}`;
  try {
    // Already renamed by a settle that was stopped before it recorded the end.
    if (chosen.branch !== branch) {
      await renameBranch({
        dataHome,
        repoDir: chosen.repoDir,
        from: chosen.branch,
        to: branch,
        ...(chosen.git ? { commonDir: chosen.git.commonDir } : {}),
      });
    }
  } catch (error) {
    return {
      job: where,
      result: {
        salvageError: `the winner's branch ${chosen.branch} was not renamed ${branch}: ${errorMessage(error)}`,
      },
    };
  }
  await updateJob(dataHome, chosen.id, () => ({ branch }));
  const job: Partial<JobFile> = {
    ...where,
    branch,
    worktreePath: chosen.worktreePath,
    workdir: chosen.workdir,
    ...(chosen.git ? { git: chosen.git } : {}),
  };
  if (!result.patchPath) return { job, result: {} };
  const patchPath = join(jobDir(dataHome, task.id), 'patch.diff');
  copyFileSync(result.patchPath, patchPath);
  return {
    job,
    result: {
      patchPath,
      mergeHow: mergeInstructions({
        repoDir: chosen.repoDir,
        branch,
        baseCommit: chosen.baseCommit,
        patchPath,
        isFromUncommitted: chosen.uncommittedAtStart !== undefined,
      }),
    },
  };
}

/**
 * Who a message for the task goes to: an answer to the attempt whose question the task shows,
 * steering to every attempt still running.
 */
export function messageTargets(dataHome: string, task: JobFile): JobFile[] {
  const attempts = (task.attempts ?? []).map((ref) => readJob(dataHome, ref.id));
  const asking = attempts.find((attempt) => attempt.state === 'needs_input');
  return asking ? [asking] : attempts.filter((attempt) => !isTerminal(attempt.state));
}

/** Each attempt's status line, with its profile, for task_progress. */
export function attemptStatusLines(dataHome: string, task: JobFile, now = Date.now()): string[] {
  return (task.attempts ?? []).map((ref) => {
    try {
      return `${statusLine(readJob(dataHome, ref.id), now)} · ${ref.profile}`;
    } catch (error) {
      return `${ref.id} ${ref.profile}: ${errorMessage(error)}`;
    }
  });
}

/** Stops every attempt of the task for `why` (a cancel), then settles it. */
export async function stopAttempts(dataHome: string, id: string, why: string): Promise<void> {
  await updateJob(dataHome, id, (current) =>
    isTerminal(current.state) || current.stopRequested ? undefined : { stopRequested: why },
  );
  await settleAttempts(dataHome, id);
}
