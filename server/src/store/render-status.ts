import type { JobSummary } from './job-file.ts';
import type { JobFile } from './job-file.ts';
import { inertLine } from '../util/inert-text.ts';

/**
 * A job as the status line reads it: the JobSummary contract plus optional fields of job.json,
 * each checked before use (the file may come from another version of the plugin).
 */
export type StatusJob = JobSummary &
  Partial<
    Pick<
      JobFile,
      | 'profile'
      | 'modelAnswered'
      | 'step'
      | 'maxTurns'
      | 'activity'
      | 'sandboxed'
      | 'endedAt'
      | 'updatedAt'
      | 'idleTimeoutS'
      | 'questionTimeoutS'
      | 'review'
      | 'error'
    >
  >;

/** One part of the line, shown until `expiresAt` (epoch seconds) unless re-rendered before. */
export interface StatusSegment {
  expiresAt: number;
  text: string;
}

/** How long a finished result stays on the line after the task ended. */
export const FINISHED_FADE_S = 600;
/** Slack past a running task's idle timeout: by then it has written again, or it is dead. */
const ACTIVE_SLACK_S = 300;
/**
 * No part outlives its job's last write by more than this, so a job file not written for that
 * long needs no reading at all (a quiet task drops off the line rather than show stale facts).
 */
export const STATUS_WINDOW_S = 1200;
const MAX_ACTIVE = 3;
const MAX_FINISHED = 3;
const SHOWN_RESULTS = new Set(['done', 'failed', 'timeout', 'lost']);

/**
 * The segments of a project's status line: pending questions, running tasks (profile and
 * model, step, activity), then results that ended in the last minutes and are not reviewed yet.
 */
export function renderStatusSegments(jobs: readonly StatusJob[], nowMs: number): StatusSegment[] {
  const now = Math.floor(nowMs / 1000);
  // Questions first: they hold a task up until the supervisor answers.
  const active = [
    ...jobs.filter((job) => job.state === 'needs_input'),
    ...jobs.filter((job) => job.state === 'running' || job.state === 'queued'),
  ];
  const segments = active.slice(0, MAX_ACTIVE).map((job) => activeSegment(job, now));
  if (active.length > MAX_ACTIVE) {
    segments.push({
      expiresAt: Math.max(...segments.map((segment) => segment.expiresAt)),
      text: `+${active.length - MAX_ACTIVE} more active`,
    });
  }
  const finished = jobs
    .filter((job) => SHOWN_RESULTS.has(job.state) && !job.reviewedAt)
    .map((job) => ({ job, endedAt: epochSeconds(job.endedAt ?? job.updatedAt) ?? now }))
    .filter(({ endedAt }) => endedAt + FINISHED_FADE_S > now)
    .sort((a, b) => b.endedAt - a.endedAt)
    .slice(0, MAX_FINISHED);
  for (const { job, endedAt } of finished) {
    segments.push({ expiresAt: endedAt + FINISHED_FADE_S, text: finishedText(job) });
  }
  return segments;
}

function activeSegment(job: StatusJob, now: number): StatusSegment {
  // From the job's own last write: re-rendering for another task must not refresh a dead one.
  const written = Math.min(epochSeconds(job.updatedAt) ?? now, now);
  const expires = (lifeS: number) => written + Math.min(lifeS + ACTIVE_SLACK_S, STATUS_WINDOW_S);
  if (job.state === 'needs_input') {
    return {
      expiresAt: expires(numberOr(job.questionTimeoutS, 600)),
      text: `${job.id} asks ${JSON.stringify(clip(job.question ?? '', 60))} → task_answer`,
    };
  }
  const who = [job.profile, job.modelAnswered].filter(isText).map((part) => clip(part, 28));
  const step =
    typeof job.step === 'number'
      ? `step ${job.step}${typeof job.maxTurns === 'number' ? `/${job.maxTurns}` : ''}`
      : '';
  const activity = isText(job.activity) ? clip(job.activity, 40) : job.state;
  const parts = [job.id, who.join(' '), step, activity];
  if (job.sandboxed === false) parts.push('unsandboxed');
  return {
    expiresAt: expires(Math.max(numberOr(job.idleTimeoutS, 300), 300)),
    text: parts.filter(Boolean).join(' · '),
  };
}

function finishedText(job: StatusJob): string {
  const verdict = job.state === 'done' && job.verdict ? ` ${job.verdict}` : '';
  const review = isText(job.review?.verdict) ? ` · review ${job.review.verdict}` : '';
  return `${job.id} ${job.state}${verdict}${review} → task_result`;
}

/** A boot's clock: the sh reader's "now" is `bootEpoch` + /proc/uptime while `bootId` matches. */
export interface BootClock {
  bootId: string;
  bootEpoch: number;
}

/** One line of inert text: the status file is line-based and a terminal shows it. */
function clip(text: string, max: number): string {
  return inertLine(text.trim(), max);
}

function isText(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : fallback;
}

function epochSeconds(iso: unknown): number | undefined {
  const ms = typeof iso === 'string' ? Date.parse(iso) : NaN;
  return Number.isNaN(ms) ? undefined : Math.floor(ms / 1000);
}
