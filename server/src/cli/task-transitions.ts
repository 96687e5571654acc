import type { StatusJob } from '../store/render-status.ts';
import { posixCksum } from '../store/status-key.ts';
import { inertLine, quotedLine } from '../util/inert-text.ts';
import { formatUsd } from '../util/format-usd.ts';
import { plural } from '../util/plural.ts';

/** Per task id, the transition already announced (`done`, `needs_input:<question crc>`…). */
export type AnnouncedRecord = Record<string, string>;

/** A job as the monitor reads it: the status line's view plus cost and files. */
export type WatchedJob = StatusJob & {
  costUsd?: unknown;
  filesTouched?: unknown;
};

/**
 * Transitions older than this are recorded without a line: a session that starts long after a
 * task ended learns about it from the SessionStart briefing, not from a burst of old news.
 */
export const ANNOUNCE_WINDOW_MS = 30 * 60_000;

const ENDED = new Set(['done', 'failed', 'timeout', 'lost', 'cancelled']);

/** What makes a transition news: a (new) question, or the end of the task. */
export function announcementKey(job: WatchedJob): string | undefined {
  if (job.state === 'needs_input') {
    return `needs_input:${posixCksum(Buffer.from(job.question ?? '')).crc}`;
  }
  return ENDED.has(job.state) ? job.state : undefined;
}

/**
 * The lines to print for this project's jobs, and the record to keep. Cancelled tasks (the
 * supervisor cancelled them), reviewed ones (it has read the result) and native tasks (Claude
 * Code reports those itself) get no line. Another session's task (`isMine` false) gets none
 * either, and its entry in the record is left as that session's watcher wrote it.
 */
export function decideAnnouncements(
  jobs: readonly WatchedJob[],
  record: AnnouncedRecord,
  nowMs: number,
  filesChanged: (job: WatchedJob) => number | undefined = () => undefined,
  isMine: (job: WatchedJob) => boolean = () => true,
): { lines: string[]; record: AnnouncedRecord } {
  const next: AnnouncedRecord = {};
  const lines: string[] = [];
  for (const job of jobs) {
    if (!isMine(job)) {
      if (record[job.id] !== undefined) next[job.id] = record[job.id]!;
      continue;
    }
    const key = announcementKey(job);
    // Running again: forget the question, so the next one is news even if worded the same.
    if (!key) continue;
    next[job.id] = key;
    if (record[job.id] === key) continue;
    const changedAt = Date.parse(job.endedAt ?? job.updatedAt ?? '');
    const isOld = !Number.isNaN(changedAt) && nowMs - changedAt > ANNOUNCE_WINDOW_MS;
    if (job.state === 'cancelled' || job.reviewedAt || job.nativeTask === true || isOld) continue;
    lines.push(transitionLine(job, filesChanged(job)));
  }
  return { lines, record: next };
}

/** One line the supervisor reads as a notification: what happened and the call to make next. */
export function transitionLine(job: WatchedJob, filesChanged?: number): string {
  const id = oneLine(job.id, 40);
  const tag = `[delegate] task ${id}`;
  if (job.state === 'needs_input') {
    return `${tag} needs an answer: ${quotedLine(String(job.question ?? '').trim(), 300)} → reply with task_answer ${id}`;
  }
  if (job.state !== 'done') {
    const why = job.error ? `: ${oneLine(job.error, 200)}` : '';
    return `${tag} ${job.state}${why} → task_result ${id}`;
  }
  const files =
    filesChanged ?? (Array.isArray(job.filesTouched) ? job.filesTouched.length : undefined);
  const facts = [
    `verdict ${oneLine(job.verdict ?? 'unknown', 20)}`,
    ...(job.review?.verdict ? [`review ${oneLine(job.review.verdict, 20)}`] : []),
    ...(files !== undefined ? [`${plural(files, 'file')} changed`] : []),
    ...(typeof job.costUsd === 'number' ? [formatUsd(job.costUsd)] : []),
    ...(job.sandboxed === false ? ['ran unsandboxed'] : []),
  ];
  return `${tag} done: ${facts.join(', ')} → review with task_result ${id}`;
}

/** One line of inert text (each transition must stay one line), trimmed and cut at `max`. */
function oneLine(text: string, max: number): string {
  return inertLine(String(text).trim(), max);
}
