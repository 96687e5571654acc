import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { jobsDir } from '../config/paths.ts';
import { parseJson } from '../util/read-json.ts';

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
 * The part of `jobs/<id>/job.json` that readers outside the task engine rely on (hooks,
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
}

/** Every readable job summary under the data home; unreadable or foreign files are skipped. */
export function readJobSummaries(dataHome: string): JobSummary[] {
  let ids: string[];
  try {
    ids = readdirSync(jobsDir(dataHome)).sort();
  } catch {
    return [];
  }
  return ids.flatMap((id) => {
    const job = readJobSummary(join(jobsDir(dataHome), id, 'job.json'));
    return job ? [job] : [];
  });
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
