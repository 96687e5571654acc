import { readFileSync } from 'node:fs';
import { uptime } from 'node:os';
import { join } from 'node:path';
import { withFileLock } from '../util/file-lock.ts';
import { readJobSummaries, type JobSummary } from './job-file.ts';
import { writeFileAtomicSync } from '../util/atomic-write.ts';
import {
  STATUS_WINDOW_S,
  renderStatusSegments,
  type BootClock,
  type StatusSegment,
} from './render-status.ts';
import { readSessionLinks } from './session-links.ts';
import { formatStatusLines, statusSessionKey } from './status-lines-file.ts';
import { statusDir, statusLinesPath } from './status-key.ts';
import { groupBy } from '../util/group-by.ts';

const LOCK_TIMEOUT_MS = 2_000;
const BOOT_ID_FILE = '/proc/sys/kernel/random/boot_id';

/**
 * Re-renders every project's status line from the jobs. Called after every job write (by the
 * server, the task workers and the CLI), so a status line refresh only reads a small file. The
 * lock makes the last render see every job write that finished before it began. Never throws:
 * a status line must not break a task.
 */
export async function refreshStatusLines(dataHome: string, nowMs = Date.now()): Promise<void> {
  try {
    await withFileLock(
      join(statusDir(dataHome), 'lines.lock'),
      () => {
        const jobs = recentJobSummaries(dataHome, nowMs);
        const text = formatStatusLines(
          segmentsByProject(jobs, nowMs),
          bootClock(nowMs),
          segmentsBySession(jobs, nowMs, readSessionLinks(dataHome).current),
        );
        writeFileAtomicSync(statusLinesPath(dataHome), text);
        return Promise.resolve();
      },
      { timeoutMs: LOCK_TIMEOUT_MS },
    );
  } catch (error) {
    process.stderr.write(`[delegate] status line not updated: ${String(error)}\n`);
  }
}

/**
 * The JobSummary of every job written within the status window (unreadable or foreign files
 * are skipped). Older files are only stat'ed: a data home full of finished tasks costs a job
 * write next to nothing.
 */
function recentJobSummaries(dataHome: string, nowMs: number): JobSummary[] {
  return readJobSummaries(dataHome, { writtenSinceMs: nowMs - STATUS_WINDOW_S * 1000 });
}

/** Each project's whole line: every task of it, whoever started it. */
function segmentsByProject(
  jobs: readonly JobSummary[],
  nowMs: number,
): Map<string, StatusSegment[]> {
  const segments = new Map<string, StatusSegment[]>();
  for (const [project, own] of groupBy(jobs, (job) => job.project)) {
    const rendered = renderStatusSegments(own, nowMs);
    if (rendered.length > 0) segments.set(project, rendered);
  }
  return segments;
}

/**
 * Each session's own line in each project: the tasks it started (tasks of no session together),
 * under the id its terminal's conversation has now (`current`, after a /clear).
 */
function segmentsBySession(
  jobs: readonly JobSummary[],
  nowMs: number,
  current: Readonly<Record<string, string>>,
): Map<string, Map<string, StatusSegment[]>> {
  const projects = new Map<string, Map<string, StatusSegment[]>>();
  const keyOf = (job: JobSummary) =>
    statusSessionKey(job.session === undefined ? undefined : (current[job.session] ?? job.session));
  for (const [project, inProject] of groupBy(jobs, (job) => job.project)) {
    const sessions = new Map<string, StatusSegment[]>();
    for (const [session, own] of groupBy(inProject, keyOf)) {
      const rendered = renderStatusSegments(own, nowMs);
      if (rendered.length > 0) sessions.set(session, rendered);
    }
    if (sessions.size > 0) projects.set(project, sessions);
  }
  return projects;
}

/** Linux: the boot's id and start, from which the reader tells the time without a process. */
function bootClock(nowMs: number): BootClock | undefined {
  try {
    const bootId = readFileSync(BOOT_ID_FILE, 'utf8').trim();
    return /^[\w-]+$/.test(bootId)
      ? { bootId, bootEpoch: Math.round(nowMs / 1000 - uptime()) }
      : undefined;
  } catch {
    return undefined;
  }
}
