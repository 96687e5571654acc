import type { TaskResultFile } from './finish-task.ts';
import { TOOL_WORDING, type Wording } from '../util/wording.ts';
import type { JobFile } from '../store/job-file.ts';
import { formatBytes } from '../util/format-bytes.ts';
import { inertBlock, inertLine, quotedLine, quotePath } from '../util/inert-text.ts';
import { formatUsd } from '../util/format-usd.ts';
import { plural } from '../util/plural.ts';

const MAX_LINE = 160;
/** What of a worker's (or a reviewer's) free text a result shows; the rest is in result.json. */
const MAX_SUMMARY_CHARS = 8_000;
const MAX_NOTES_CHARS = 4_000;
/** Files named in a result's "files changed"; the patch has them all. */
const MAX_FILES_LISTED = 100;

function age(iso: string | undefined, now: number): string {
  if (!iso) return '?';
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  return seconds < 90
    ? `${seconds}s`
    : seconds < 5400
      ? `${Math.round(seconds / 60)}m`
      : `${Math.round(seconds / 3600)}h`;
}

/**
 * One line of at most 160 characters: the task's state and what to do about it. Given the
 * session asking, a task another session (or none) started says so.
 */
export function statusLine(
  job: JobFile,
  now = Date.now(),
  wording = TOOL_WORDING,
  session?: string,
): string {
  let line: string;
  switch (job.state) {
    case 'needs_input':
      line = `${job.id} needs_input: ${quotedLine(job.question ?? '', MAX_LINE)} → ${wording.answer(job.id)}`;
      break;
    case 'queued':
    case 'running':
      line = `${job.id} ${job.state} step ${job.step}/${job.maxTurns} · ${inertLine(job.activity ?? 'starting', MAX_LINE)} · ${age(job.lastEventAt, now)} ago`;
      break;
    case 'done':
      line = `${job.id} done ${job.verdict ?? ''}${job.review ? ` · review ${job.review.verdict}` : ''} · ${plural(job.filesTouched.length, 'file')} · ${formatUsd(job.costUsd)} → ${wording.result(job.id)}`;
      break;
    default:
      line = `${job.id} ${job.state}: ${inertLine(job.error ?? '', MAX_LINE)} → ${wording.result(job.id)}`;
  }
  // A task whose commands ran outside the OS sandbox says so on every line, never cut off.
  const others = session !== undefined && job.session !== session ? " · another session's" : '';
  const mark = `${job.sandboxed === false ? ' · unsandboxed' : ''}${others}`;
  const room = MAX_LINE - mark.length;
  return `${line.length <= room ? line : `${line.slice(0, room - 1)}…`}${mark}`;
}

/**
 * Whether the task's commands (and its CLI, for a CLI engine) run in the OS sandbox, and the
 * hosts they may reach; empty for a task recorded before the sandbox existed.
 */
export function sandboxLine(job: JobFile): string {
  if (job.runner) {
    const { name, host, port, taskDir, sandboxed } = job.runner;
    const sandbox = sandboxed
      ? 'sandbox: on there (bubblewrap) · network: none'
      : `sandbox: off — unsandboxed (${job.sandboxNote ?? 'no reason recorded'})`;
    return `runner: ${name} (${host}${port ? `:${port}` : ''}) · commands in ${taskDir}/tree · ${sandbox}`;
  }
  if (job.sandboxed === undefined) return '';
  if (!job.sandboxed)
    return `sandbox: off — unsandboxed (${job.sandboxNote ?? 'no reason recorded'})`;
  const hosts = job.allowHosts?.length ? job.allowHosts.join(', ') : 'none';
  return `sandbox: on · network: ${hosts}${job.sandboxNote ? ` · ${job.sandboxNote}` : ''}`;
}

/** What of a patch task_result shows inline: its start, cut at a line when the patch is bigger. */
export interface InlinePatch {
  text: string;
  /** Bytes shown; less than the patch's own size when it was cut. */
  shownBytes: number;
  isCut: boolean;
}

/**
 * task_result's text: facts first (verdict, test exit code and tail), then the summary and the
 * patch. Every line of ours starts at the margin; whatever the worker, its tests, its reviewer
 * or its endpoint wrote is indented under a heading of ours or escaped onto one line
 * (util/inert-text.ts), and file names are quoted as git quotes them, so none of it can pass
 * for a line of ours.
 */
export function resultText(
  job: JobFile,
  result: TaskResultFile,
  patch: InlinePatch | undefined,
  wording: Wording = TOOL_WORDING,
): string {
  const verification = result.verification;
  const lines = [
    `${job.id} ${result.state}${result.verdict ? ` — verdict: ${result.verdict}` : ''}`,
    job.route ? inertLine(job.route, 400) : '',
    job.runner
      ? `runner: the worker's commands and the test command ran on ${job.runner.name} (${job.runner.host})`
      : '',
    job.sandboxed === false
      ? `unsandboxed: the worker's commands and the test command ran without the OS sandbox (${job.sandboxNote ?? 'no reason recorded'})`
      : '',
    verification
      ? `test command: ${inertLine(verification.command)} → exit ${verification.exitCode}${verification.timedOut ? ' (timed out)' : ''} in ${(verification.ms / 1000).toFixed(1)} s`
      : job.testCommand
        ? ''
        : 'no test command: the work is unverified',
    verification?.outputTail
      ? `test output (tail):\n${inertBlock(verification.outputTail.slice(-1_500))}`
      : '',
    result.failedAttempts?.length
      ? `fix rounds: the tests failed ${plural(result.failedAttempts.length, 'time')} before (exit ${result.failedAttempts.map((attempt) => attempt.exitCode ?? '?').join(', ')}); the output went back to the worker each time`
      : '',
    reviewText(job, result),
    result.error ? `error: ${inertLine(result.error)}` : '',
    `summary:\n${inertBlock(result.summary || '(none)', MAX_SUMMARY_CHARS)}`,
    filesChangedText(result.filesChanged),
    result.inPlace ? inPlaceText(job.id, result.inPlace, wording) : '',
    result.diffstat ? `diffstat:\n${inertBlock(result.diffstat)}` : '',
    `cost: ${formatUsd(job.costUsd)} · model: ${inertLine(job.modelAnswered ?? job.profile ?? '?', 120)} · steps: ${job.step}`,
    result.patchPath ? `patch: ${result.patchPath} (${result.patchBytes} bytes)` : '',
    patch ? patchText(patch, result) : '',
    result.mergeHow ? `to take the work:\n${inertBlock(result.mergeHow)}` : '',
    result.cleanedUp ?? '',
    result.salvageError ? `salvage failed: ${inertLine(result.salvageError)}` : '',
    result.attempts ? attemptsText(result.attempts, job.attemptStrategy === 'ladder') : '',
    `when done reviewing: ${wording.cleanup(job.id)}`,
  ];
  return lines.filter(Boolean).join('\n');
}

function reviewText(job: JobFile, result: TaskResultFile): string {
  const review = result.review;
  if (review) {
    const model = review.modelAnswered ? `, ${inertLine(review.modelAnswered, 120)}` : '';
    return `review (${review.profile}${model}) against the definition of done — ${review.verdict}:\n${inertBlock(review.notes, MAX_NOTES_CHARS)}`;
  }
  return job.definitionOfDone && !job.reviewProfile
    ? 'no review: every profile that could review this task is a CLI engine, and the reviewer calls a model API (add an openai, anthropic or copilot profile)'
    : '';
}

function filesChangedText(files: TaskResultFile['filesChanged']): string {
  if (!files.length) return 'files changed: none';
  const listed = files
    .slice(0, MAX_FILES_LISTED)
    .map((file) => `${inertLine(file.status, 4)} ${quotePath(file.path)}`);
  const more = files.length - listed.length;
  return `files changed (${files.length}): ${listed.join(', ')}${more > 0 ? `, and ${more} more (see the patch)` : ''}`;
}

/** The patch indented as the worker's text, and when cut, where the whole of it is. */
function patchText(patch: InlinePatch, result: TaskResultFile): string {
  if (!patch.isCut) return `patch:\n${inertBlock(patch.text)}`;
  const sizes = `${formatBytes(patch.shownBytes)} of ${formatBytes(result.patchBytes)}`;
  return (
    `patch (cut: its first ${sizes}):\n${inertBlock(patch.text)}\n` +
    `patch cut after ${sizes}: the whole patch is in ${result.patchPath}`
  );
}

/** How an in-place task's changes were measured, and how to undo them. */
function inPlaceText(
  id: string,
  inPlace: NonNullable<TaskResultFile['inPlace']>,
  wording: Wording,
): string {
  const leftOut = inPlace.leftOut.length ? ` (not compared: ${inPlace.leftOut.join(', ')})` : '';
  const cut = inPlace.isCut
    ? '; the folder now holds over 200,000 entries, so the comparison stopped there and a deletion past that is not listed'
    : '';
  return [
    `in place: changes measured on disk in ${inPlace.workdir} against the snapshot taken before the worker started${leftOut}${cut}`,
    `to undo: ${wording.discard(id)} puts it back as it was then (refused for a path changed again since the task ended)`,
  ].join('\n');
}

/** One line per attempt: which won, and why each other lost (its patch kept). */
function attemptsText(
  attempts: NonNullable<TaskResultFile['attempts']>,
  isLadder: boolean,
): string {
  const lines = attempts.map(
    (attempt) =>
      `${attempt.id} ${attempt.profile}: ${attempt.state}${attempt.verdict ? ` ${attempt.verdict}` : ''}${attempt.review ? ` · review ${attempt.review}` : ''} · ${formatUsd(attempt.costUsd)} — ${inertLine(attempt.outcome)}${attempt.patchPath ? ` · patch ${attempt.patchPath}` : ''}`,
  );
  const head = isLadder
    ? `ladder (${attempts.length} rungs, climbed in this order; the result above is the passing or best rung's)`
    : `attempts (${attempts.length}, the result above is the first line's)`;
  return `${head}:\n${inertBlock(lines.join('\n'))}`;
}
