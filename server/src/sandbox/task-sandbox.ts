import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { jobsDir, type Environment } from '../config/paths.ts';
import { HOST_PATTERN } from '../config/config-rules.ts';
import { TaskError, UserError } from '../util/user-error.ts';
import { checkSandbox, sandboxInstallHint } from './os-sandbox.ts';
import { taskSandboxPolicy, type SandboxPolicy } from './sandbox-policy.ts';
import { forgetSandboxCheck } from './sandbox-record.ts';
import type { ResourceLimits } from '../config/resource-limits.ts';

/** The fields of a task (job.json) that its sandbox is made from. */
export interface SandboxedJob {
  id: string;
  workdir: string;
  worktreePath?: string;
  sandboxed?: boolean;
  /** Sandboxed on an earlier process's check: probed again before its first command. */
  sandboxOnRecord?: boolean;
  allowHosts?: string[];
  /** Where the task's git metadata is (`RecordedGit` in store/job-file.ts). */
  git?: { gitDir: string; commonDir: string; workTree: string };
  /** Git-shaped paths inside the task directory (worktree or workdir) at its start, relative to it. */
  nestedGitAtStart?: string[];
  /** Per-command resource limits, from the configuration at task start. */
  limits?: ResourceLimits;
}

/**
 * The policy a task's commands run under, for the process about to run them (the server's
 * preflight, the worker): writes in the task's directory — the whole disposable worktree, or
 * the workdir of an in-place task — `jobs/<id>/tmp` and `extraWritable`, never in git
 * metadata (the repository's git directory, the worktree's `.git` pointer, repositories
 * already inside); `extraReadable` readable. A task started sandboxed never runs unsandboxed:
 * if the sandbox stopped working since task_start, this throws and the task fails instead.
 */
export async function sandboxForJob(
  job: SandboxedJob,
  dataHome: string,
  env: Environment,
  extraReadable: readonly string[] = [],
  extraWritable: readonly string[] = [],
): Promise<SandboxPolicy | undefined> {
  if (!job.sandboxed) return undefined;
  await checkJobSandbox(env, dataHome, { probe: job.sandboxOnRecord === true });
  return sandboxPolicyForJob(job, dataHome, env, extraReadable, extraWritable);
}

/**
 * A task started sandboxed finds the sandbox still working, or this throws (the task fails).
 * After task_start's own probe, starting it (dependencies, proxies) is enough; a task decided on
 * an earlier process's check (`probe`) runs a probe command as well. A probe that fails removes
 * that record, so the next start checks afresh, unless the task is being stopped (`signal`
 * aborted): its commands and worktree are going, and the failure says nothing about the sandbox.
 */
export async function checkJobSandbox(
  env: Environment,
  dataHome: string,
  { probe = false, signal }: { probe?: boolean; signal?: AbortSignal } = {},
): Promise<void> {
  const check = await checkSandbox(env, probe);
  if (!check.isAvailable) {
    if (probe && !signal?.aborted) forgetSandboxCheck(dataHome);
    throw new TaskError(
      `the task was started in the OS sandbox, which no longer works: ${check.reason ?? 'unknown reason'}. ${sandboxInstallHint()}`,
      'failed',
    );
  }
}

/**
 * The policy alone, with no check that the sandbox works: for a process that checks it with
 * {@link checkJobSandbox} before any command runs (every command starts the sandbox anyway,
 * and fails rather than run outside it).
 */
export function sandboxPolicyForJob(
  job: SandboxedJob,
  dataHome: string,
  env: Environment,
  extraReadable: readonly string[] = [],
  extraWritable: readonly string[] = [],
): SandboxPolicy | undefined {
  if (!job.sandboxed) return undefined;
  // A worktree is writable whole: a read-only worktree around a writable workdir inside it
  // leaves bubblewrap unable to make its mount points there, and every command fails.
  const taskDir = job.worktreePath ?? job.workdir;
  return taskSandboxPolicy({
    taskDir,
    tmpDir: join(jobsDir(dataHome), job.id, 'tmp'),
    dataHome,
    home: env.HOME,
    allowHosts: job.allowHosts ?? [],
    readable: [taskDir, ...extraReadable],
    readOnly: gitMetadataOf(job),
    ...(job.limits ? { limits: job.limits } : {}),
    writable: extraWritable,
  });
}

/** The git metadata a task's commands must not change: all of it that exists. */
function gitMetadataOf(job: SandboxedJob): string[] {
  if (!job.git) return [];
  const { gitDir, commonDir, workTree } = job.git;
  const taskDir = job.worktreePath ?? job.workdir;
  const nested = (job.nestedGitAtStart ?? []).map((path) => join(taskDir, path));
  return [gitDir, commonDir, join(workTree, '.git'), ...nested].filter((path) => existsSync(path));
}

/** The hosts a task's commands may reach: the profile's and the task's, checked and deduplicated. */
export function taskAllowHosts(...lists: Array<readonly string[] | undefined>): string[] {
  const hosts = [...new Set(lists.flatMap((list) => list ?? []).map((host) => host.trim()))];
  const bad = hosts.find((host) => !HOST_PATTERN.test(host));
  if (bad !== undefined) {
    throw new UserError(
      `allow_hosts: "${bad}" is not a host. Use a name ("api.example.com"), a wildcard ("*.example.com"), ` +
        'an IP literal ("10.0.0.5", "[::1]"), each optionally with ":port".',
    );
  }
  return hosts;
}
