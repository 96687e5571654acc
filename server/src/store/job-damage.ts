/**
 * What makes a task's files unusable: a job.json (or an ended task's result.json) that does not
 * parse or does not describe the task. Such a task is listed as damaged, never skipped.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../util/user-error.ts';
import { TOOL_WORDING, type Wording } from '../util/wording.ts';
import { TASK_STATES, type TaskState } from './job-file.ts';
import type { JobFile } from './job-file.ts';

/** 'does not hold a JSON object' unless the value is one. */
export function objectProblem(value: unknown): string | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? undefined
    : 'does not hold a JSON object';
}

/** What makes a parsed job.json unusable as a task, if anything. */
export function jobShapeProblem(value: unknown, id: string): string | undefined {
  const notObject = objectProblem(value);
  if (notObject) return notObject;
  const job = value as Partial<Record<keyof JobFile, unknown>>;
  if (job.id !== id) return `names another task id (${JSON.stringify(job.id)})`;
  if (!TASK_STATES.includes(job.state as TaskState))
    return `has an unknown state (${JSON.stringify(job.state)?.slice(0, 40)})`;
  const strings = ['project', 'task', 'createdAt', 'workdir'] as const;
  const numbers = ['step', 'maxTurns', 'costUsd'] as const;
  const missing = [
    ...strings.filter((field) => typeof job[field] !== 'string'),
    ...numbers.filter((field) => typeof job[field] !== 'number'),
    ...(Array.isArray(job.filesTouched) ? [] : ['filesTouched']),
  ];
  return missing.length ? `lacks valid fields: ${missing.join(', ')}` : undefined;
}

/** A job file (job.json, or result.json of an ended task) that cannot be used, and why. */
export interface JobDamage {
  id: string;
  /** The damaged file's absolute path. */
  file: string;
  /** Fits after the file name: "is empty", "is not valid JSON (cut off: …)". */
  problem: string;
  /** What could be read of it, to salvage the project, worktree and branch from. */
  text?: string;
  /** The task, when only its result.json is damaged. */
  job?: JobFile;
}

/** A task whose files do not parse: it is listed as damaged and task_cleanup removes it. */
export class DamagedJobError extends UserError {
  constructor(
    readonly damage: JobDamage,
    wording: Wording = TOOL_WORDING,
  ) {
    super(damagedMessage(damage, wording));
  }
}

export function damagedMessage(damage: JobDamage, wording: Wording): string {
  const what = damage.job
    ? `Task ${damage.id} (${damage.job.state}) is damaged: ${damage.file} ${damage.problem}, so its result cannot be shown.` +
      (damage.job.branch ? ` Its work, if any, is on branch ${damage.job.branch}.` : '')
    : `Task ${damage.id} is damaged: ${damage.file} ${damage.problem}, so its state and result cannot be read.`;
  return `${what} ${wording.cleanup(damage.id)} removes it with its worktree and branch (a branch with unmerged commits is kept, and named).`;
}

/** `<dataHome>/worktrees/<repository>/<id>`, if such a folder is there. */
export function strayWorktree(dataHome: string, id: string): string | undefined {
  const root = join(dataHome, 'worktrees');
  let repositories: string[];
  try {
    repositories = readdirSync(root);
  } catch {
    return undefined;
  }
  return repositories.map((name) => join(root, name, id)).find((path) => existsSync(path));
}
