import { readJob, listJobs, isTerminal, type JobFile } from './job-store.ts';
import { reconcileJob } from './reconcile.ts';
import { TOOL_WORDING } from '../util/wording.ts';

/** A task, reconciled with reality (dead or overdue workers are found here). */
export async function getTask(
  dataHome: string,
  id: string,
  wording = TOOL_WORDING,
): Promise<JobFile> {
  return reconcileJob(dataHome, readJob(dataHome, id, wording));
}

/** This project's tasks that are active or ended but not yet reviewed, reconciled. */
export async function projectTasks(dataHome: string, project: string): Promise<JobFile[]> {
  const jobs = listJobs(dataHome).filter((job) => job.project === project);
  const reconciled = await Promise.all(jobs.map((job) => reconcileJob(dataHome, job)));
  return reconciled.filter(
    (job) => !isTerminal(job.state) || (!job.reviewedAt && job.state !== 'cancelled'),
  );
}
