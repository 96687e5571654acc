import type { TaskResultFile } from './finish-task.ts';
import { TOOL_WORDING, type Wording } from '../util/wording.ts';
import type { JobFile } from '../store/job-file.ts';

const MAX_LINE = 160;

function age(iso: string | undefined, now: number): string {
  if (!iso) return '?';
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  return seconds < 90
    ? `${seconds}s`
    : seconds < 5400
      ? `${Math.round(seconds / 60)}m`
      : `${Math.round(seconds / 3600)}h`;
}

/** One line of at most 160 characters: the task's state and what to do about it. */
export function statusLine(job: JobFile, now = Date.now(), wording = TOOL_WORDING): string {
  let line: string;
  switch (job.state) {
    case 'needs_input':
      line = `${job.id} needs_input: ${JSON.stringify(job.question ?? '')} → ${wording.answer(job.id)}`;
      break;
    case 'queued':
    case 'running':
      line = `${job.id} ${job.state} step ${job.step}/${job.maxTurns} · ${job.activity ?? 'starting'} · ${age(job.lastEventAt, now)} ago`;
      break;
    case 'done':
      line = `${job.id} done ${job.verdict ?? ''}${job.review ? ` · review ${job.review.verdict}` : ''} · ${job.filesTouched.length} files · $${job.costUsd.toFixed(3)} → ${wording.result(job.id)}`;
      break;
    default:
      line = `${job.id} ${job.state}: ${job.error ?? ''} → ${wording.result(job.id)}`;
  }
  // A task whose commands ran outside the OS sandbox says so on every line, never cut off.
  const mark = job.sandboxed === false ? ' · unsandboxed' : '';
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

/** task_result's text: facts first (verdict, test exit code and tail), then the summary and the patch. */
export function resultText(
  job: JobFile,
  result: TaskResultFile,
  patch: string | undefined,
  wording: Wording = TOOL_WORDING,
): string {
  const verification = result.verification;
  const lines = [
    `${job.id} ${result.state}${result.verdict ? ` — verdict: ${result.verdict}` : ''}`,
    job.runner
      ? `runner: the worker's commands and the test command ran on ${job.runner.name} (${job.runner.host})`
      : '',
    job.sandboxed === false
      ? `unsandboxed: the worker's commands and the test command ran without the OS sandbox (${job.sandboxNote ?? 'no reason recorded'})`
      : '',
    verification
      ? `test command: ${verification.command} → exit ${verification.exitCode}${verification.timedOut ? ' (timed out)' : ''} in ${(verification.ms / 1000).toFixed(1)} s`
      : job.testCommand
        ? ''
        : 'no test command: the work is unverified',
    verification?.outputTail
      ? `test output (tail):\n${indent(verification.outputTail.slice(-1_500))}`
      : '',
    result.failedAttempts?.length
      ? `fix rounds: the tests failed ${result.failedAttempts.length} time(s) before (exit ${result.failedAttempts.map((attempt) => attempt.exitCode ?? '?').join(', ')}); the output went back to the worker each time`
      : '',
    result.review
      ? `review (${result.review.profile}${result.review.modelAnswered ? `, ${result.review.modelAnswered}` : ''}) against the definition of done — ${result.review.verdict}:\n${indent(result.review.notes)}`
      : job.definitionOfDone && !job.reviewProfile
        ? 'no review: every profile that could review this task is a CLI engine, and the reviewer calls a model API (add an openai, anthropic or copilot profile)'
        : '',
    result.error ? `error: ${result.error}` : '',
    `summary:\n${indent(result.summary || '(none)')}`,
    result.filesChanged.length
      ? `files changed (${result.filesChanged.length}): ${result.filesChanged.map((file) => `${file.status} ${file.path}`).join(', ')}`
      : 'files changed: none',
    result.inPlace ? inPlaceText(job.id, result.inPlace, wording) : '',
    result.diffstat ? `diffstat:\n${indent(result.diffstat)}` : '',
    `cost: $${job.costUsd.toFixed(4)} · model: ${job.modelAnswered ?? job.profile ?? '?'} · steps: ${job.step}`,
    result.patchPath ? `patch: ${result.patchPath} (${result.patchBytes} bytes)` : '',
    patch ? `patch:\n${patch}` : '',
    result.mergeHow ? `to take the work:\n${indent(result.mergeHow)}` : '',
    result.cleanedUp ?? '',
    result.salvageError ? `salvage failed: ${result.salvageError}` : '',
    result.attempts ? attemptsText(result.attempts) : '',
    `when done reviewing: ${wording.cleanup(job.id)}`,
  ];
  return lines.filter(Boolean).join('\n');
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
function attemptsText(attempts: NonNullable<TaskResultFile['attempts']>): string {
  const lines = attempts.map(
    (attempt) =>
      `${attempt.id} ${attempt.profile}: ${attempt.state}${attempt.verdict ? ` ${attempt.verdict}` : ''}${attempt.review ? ` · review ${attempt.review}` : ''} · $${attempt.costUsd.toFixed(4)} — ${attempt.outcome}${attempt.patchPath ? ` · patch ${attempt.patchPath}` : ''}`,
  );
  return `attempts (${attempts.length}, the result above is the first line's):\n${indent(lines.join('\n'))}`;
}

function indent(text: string): string {
  return text
    .trimEnd()
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
}
