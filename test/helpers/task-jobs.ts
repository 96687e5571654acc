// Writes task files through the task engine's own writeJob (which also re-renders the project's
// status line), for tests of what reads them: the monitor, `delegate wait`, the status line.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { writeJob } from '../../server/src/store/job-store.ts';
import type { JobFile } from '../../server/src/store/job-file.ts';

/** A complete job.json with quiet defaults: queued in `project`, no worker process. */
export function jobOf(project: string, fields: Partial<JobFile> & { id: string }): JobFile {
  const now = new Date().toISOString();
  return {
    project,
    state: 'queued',
    task: 'a test task',
    createdAt: now,
    updatedAt: now,
    isolation: 'none',
    workdir: project,
    maxTurns: 40,
    timeoutS: 1800,
    idleTimeoutS: 300,
    questionTimeoutS: 600,
    step: 0,
    lastEventAt: now,
    costUsd: 0,
    filesTouched: [],
    ...fields,
  };
}

/** Writes (or rewrites) a task the way the engine does: atomically, status line re-rendered. */
export async function writeTask(
  dataHome: string,
  project: string,
  fields: Partial<JobFile> & { id: string },
): Promise<JobFile> {
  const job = jobOf(project, { ...fields, updatedAt: new Date().toISOString() });
  mkdirSync(join(dataHome, 'jobs', job.id), { recursive: true });
  await writeJob(dataHome, job);
  return job;
}
