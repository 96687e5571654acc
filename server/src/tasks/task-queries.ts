import {
  DamagedJobError,
  damagedResult,
  readJob,
  scanJobs,
  isTerminal,
} from '../store/job-store.ts';
import { reconcileJob } from './reconcile.ts';
import {
  damagedStatusLine,
  locateDamaged,
  projectRepository,
  type DamagedJob,
} from './damaged-jobs.ts';
import { statusLine } from './task-format.ts';
import { TOOL_WORDING, type Wording } from '../util/wording.ts';
import { errorMessage } from '../util/user-error.ts';
import { isShownAlone, type JobFile } from '../store/job-file.ts';

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
  return (await projectTaskList(dataHome, project)).jobs.filter(
    (job) => !isTerminal(job.state) || (!job.reviewedAt && job.state !== 'cancelled'),
  );
}

/** Every task of this project, newest first and reconciled, and its damaged ones. */
export async function projectTaskList(
  dataHome: string,
  project: string,
): Promise<{ jobs: JobFile[]; damaged: DamagedJob[] }> {
  const scan = scanJobs(dataHome);
  // An attempt is shown through its task.
  const own = scan.jobs.filter((job) => job.project === project && isShownAlone(dataHome, job));
  // Only this project's ended tasks have their result.json checked: a listing stays cheap.
  const resultDamage = own.flatMap((job) => damagedResult(dataHome, job) ?? []);
  const isDamaged = new Set(resultDamage.map((damage) => damage.id));
  const jobs = await Promise.all(
    own.filter((job) => !isDamaged.has(job.id)).map((job) => reconcileJob(dataHome, job)),
  );
  return {
    jobs,
    damaged: await locateAll(dataHome, project, [...scan.damaged, ...resultDamage]),
  };
}

async function locateAll(
  dataHome: string,
  project: string,
  damages: ReturnType<typeof scanJobs>['damaged'],
): Promise<DamagedJob[]> {
  if (damages.length === 0) return [];
  const repository = await projectRepository(project);
  return damages
    .map((damage) => locateDamaged(dataHome, damage, project, repository))
    .filter((job) => job.isOfProject);
}

/** A damaged task found by id (it belongs to whichever project asks). */
export async function locateDamagedTask(
  dataHome: string,
  project: string,
  error: DamagedJobError,
): Promise<DamagedJob> {
  return locateDamaged(dataHome, error.damage, project, await projectRepository(project));
}

/**
 * task_status's text: the named tasks, or this project's active and unreviewed ones; damaged
 * tasks are listed too, with what is wrong and what to do. Given the session asking, the
 * tasks of other sessions are marked.
 */
export async function taskStatusText(
  dataHome: string,
  project: string,
  ids: readonly string[] | undefined,
  wording: Wording = TOOL_WORDING,
  session?: string,
): Promise<string> {
  if (ids?.length) {
    const lines = await Promise.all(
      ids.map((id) => oneStatus(dataHome, project, id, wording, session)),
    );
    return lines.join('\n');
  }
  const { jobs, damaged } = await projectTaskList(dataHome, project);
  const shown = jobs.filter(
    (job) => !isTerminal(job.state) || (!job.reviewedAt && job.state !== 'cancelled'),
  );
  const lines = [
    ...shown.map((job) => statusLine(job, Date.now(), wording, session)),
    ...damaged.map((job) => damagedStatusLine(job, wording)),
  ];
  return lines.length ? lines.join('\n') : 'No active or unreviewed tasks in this project.';
}

async function oneStatus(
  dataHome: string,
  project: string,
  id: string,
  wording: Wording,
  session: string | undefined,
): Promise<string> {
  try {
    const job = await getTask(dataHome, id, wording);
    const resultDamage = damagedResult(dataHome, job);
    if (resultDamage)
      return damagedStatusLine(locateDamaged(dataHome, resultDamage, project, undefined), wording);
    return statusLine(job, Date.now(), wording, session);
  } catch (error) {
    if (error instanceof DamagedJobError)
      return damagedStatusLine(await locateDamagedTask(dataHome, project, error), wording);
    return `${id}: ${errorMessage(error)}`;
  }
}
