import { realpathSync } from 'node:fs';
import { z } from 'zod';

import { RUNS_WORKERS } from './annotations.ts';
import { checkProfileArgument, defineTool, lazily, type ToolRun } from './define-tool.ts';
import type { JobFile } from '../store/job-file.ts';
import { formatBytes } from '../util/format-bytes.ts';
import { plural } from '../util/plural.ts';

/** task_start's arguments (its schema, also checked by the native-task door). */
export const taskStartInput = lazily(() => ({
  task: z.string().min(1).describe('What to do, with the context a newcomer needs.'),
  agent: z.string().min(1).optional().describe('Agent definition to run (see agents_list).'),
  profile: z.string().min(1).optional().describe('Worker profile, or "auto" (see providers).'),
  workdir: z.string().min(1).optional().describe('Directory under the project.'),
  isolation: z
    .enum(['worktree', 'none'])
    .optional()
    .describe('worktree (default; needs git) or none (in place, snapshotted).'),
  base_branch: z
    .string()
    .min(1)
    .optional()
    .describe('Branch or commit to start from (default: HEAD + uncommitted work).'),
  test_command: z
    .string()
    .min(1)
    .optional()
    .describe('Command verifying the work, run before and after; failures go back to fix.'),
  definition_of_done: z
    .string()
    .min(1)
    .optional()
    .describe('What "done" means; a reviewer grades the diff against it.'),
  budget_usd: z
    .number()
    .positive()
    .optional()
    .describe('Cost cap of the whole task (≤ configured perTaskUsd).'),
  max_turns: z
    .number()
    .int()
    .positive()
    .max(500)
    .optional()
    .describe('Model turns at most (default 40 cloud, 80 local; max 150).'),
  timeout_s: z
    .number()
    .int()
    .positive()
    .max(86_400)
    .optional()
    .describe('Hard time limit (default 1800).'),
  allow_hosts: z
    .array(z.string().min(1))
    .max(50)
    .optional()
    .describe('Hosts sandboxed commands may reach.'),
  attempts: z
    .number()
    .int()
    .min(1)
    .max(5)
    .optional()
    .describe('Workers racing in own worktrees; tests or reviewer pick one.'),
  attempt_profiles: z
    .union([z.array(z.string().min(1)).max(5), z.literal('auto')])
    .optional()
    .describe('Profile per attempt, or "auto".'),
  escalate: z
    .array(z.string().min(1))
    .max(5)
    .optional()
    .describe('Profiles climbed while tests fail.'),
  attempt_strategy: z
    .enum(['first_pass', 'best_review'])
    .optional()
    .describe('first_pass (default with tests) or best_review.'),
  runner: z.string().min(1).optional().describe('SSH runner for its commands.'),
  wait_s: z
    .number()
    .int()
    .min(0)
    .max(100)
    .optional()
    .describe('Wait this long for the result inline.'),
}));

export const taskStartTool = defineTool({
  name: 'task_start',
  title: 'Start a task',
  description:
    'Starts a task for a tool-calling worker (read/write/edit/search/bash); returns at once with its id and ' +
    'test preflight. In a git repo it works in a disposable worktree on branch delegate/<id>. Poll ' +
    'task_status, answer with task_answer, review with task_result.',
  inputSchema: taskStartInput,
  nativeTask: 'job',
  annotations: RUNS_WORKERS,
  handler: async (input, run) => (await runTaskStart(input, run)).text,
});

export type TaskStartInput = z.infer<z.ZodObject<ReturnType<typeof taskStartInput>>>;

/**
 * task_start's work: the job it started and the text the tool returns. The native-task door
 * (`tools/task-door.ts`) runs it too, to answer with a task for the same job.
 */
export async function runTaskStart(
  input: TaskStartInput,
  { context, services, call }: ToolRun,
  options: { nativeTask?: boolean } = {},
): Promise<{ job: JobFile; text: string }> {
  if (input.profile !== undefined) checkProfileArgument(input.profile, 'profile');
  // "auto": the `attempts` best (3 by default), as "auto" in each place.
  const attemptProfiles =
    input.attempt_profiles === 'auto'
      ? Array.from({ length: input.attempts ?? 3 }, () => 'auto')
      : input.attempt_profiles;
  for (const profile of attemptProfiles ?? []) checkProfileArgument(profile, 'attempt_profiles');
  for (const profile of input.escalate ?? []) checkProfileArgument(profile, 'escalate');
  const { ensureResult, isTerminal, readJob, reconcileJob, resultText, startTask, statusLine } =
    services;
  const job = await startTask(
    {
      task: input.task,
      ...(input.agent ? { agent: input.agent } : {}),
      ...(input.profile ? { profile: input.profile } : {}),
      ...(input.workdir ? { workdir: input.workdir } : {}),
      ...(input.isolation ? { isolation: input.isolation } : {}),
      ...(input.base_branch ? { baseBranch: input.base_branch } : {}),
      ...(input.test_command ? { testCommand: input.test_command } : {}),
      ...(input.definition_of_done ? { definitionOfDone: input.definition_of_done } : {}),
      ...(input.budget_usd !== undefined ? { budgetUsd: input.budget_usd } : {}),
      ...(input.max_turns ? { maxTurns: input.max_turns } : {}),
      ...(input.timeout_s ? { timeoutS: input.timeout_s } : {}),
      ...(input.allow_hosts?.length ? { allowHosts: input.allow_hosts } : {}),
      ...(input.attempts !== undefined ? { attempts: input.attempts } : {}),
      ...(attemptProfiles ? { attemptProfiles } : {}),
      ...(input.attempt_strategy ? { attemptStrategy: input.attempt_strategy } : {}),
      ...(input.escalate ? { escalate: input.escalate } : {}),
      ...(input.runner ? { runner: input.runner } : {}),
      ...(options.nativeTask ? { nativeTask: true } : {}),
    },
    context,
  );
  const deadline = Date.now() + (input.wait_s ?? 0) * 1000;
  let current = job;
  while (!isTerminal(current.state) && Date.now() < deadline && !call.signal.aborted) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    current = await reconcileJob(context.dataHome, readJob(context.dataHome, job.id));
  }
  // Ended already (within wait_s, at its preflight, or cancelled meanwhile): its result.
  if (isTerminal(current.state)) {
    return {
      job: current,
      text: resultText(current, await ensureResult(context.dataHome, current), undefined),
    };
  }
  const preflight = current.preflight
    ? `preflight: ${current.preflight.command} → exit ${current.preflight.exitCode}${current.preflight.exitCode === 0 ? ' (passes before any change)' : ' (fails before any change)'}`
    : 'preflight: no test command; the result will be unverified';
  const where = current.attempts
    ? current.attemptStrategy === 'ladder'
      ? `a ladder of ${current.attempts.length} rungs, each in its own worktree from the same base, climbed while the work fails verification: ${current.attempts.map((ref) => `${ref.id} ${ref.profile}`).join(' → ')}; the passing rung's work lands on branch delegate/${current.id}`
      : `${plural(current.attempts.length, 'attempt')} (${current.attemptStrategy}), each in its own worktree: ${current.attempts.map((ref) => `${ref.id} ${ref.profile}`).join(', ')}; the winner's work lands on branch delegate/${current.id}`
    : current.branch
      ? `branch ${current.branch} in worktree ${realpathSync(current.workdir)}`
      : inPlaceLine(current);
  const runner = current.runner
    ? [
        `commands and tests run on runner ${current.runner.name} (${current.runner.host}) in ${current.runner.taskDir}${current.runner.sandboxed ? ', sandboxed' : ''}; files are edited here and synced`,
      ]
    : [];
  const start = current.uncommittedAtStart
    ? [
        `started from your uncommitted changes (${plural(current.uncommittedAtStart.files, 'file')}); base_branch "HEAD" starts from the last commit instead`,
      ]
    : [];
  const text = [
    statusLine(current),
    ...(current.route ? [current.route] : []),
    where,
    ...runner,
    ...start,
    preflight,
    options.nativeTask
      ? `Claude Code runs it as a background task: a worker question reaches the user as a form, and the result arrives when it ends; no need to poll (task_status ${current.id} for details)`
      : `poll: task_status ${current.id}`,
  ].join('\n');
  return { job: current, text };
}

/** Where an in-place task works, what its snapshot holds, and how to undo its work. */
function inPlaceLine(job: JobFile): string {
  if (!job.snapshot) return `in ${job.workdir}`;
  const { entries, bytes, leftOut } = job.snapshot;
  return `in place in ${job.workdir}, which it edits directly; snapshot taken first (${plural(entries, 'file or folder', 'files and folders')}, ${formatBytes(bytes)}${leftOut.length ? `; left out: ${leftOut.join(', ')}` : ''}): task_cleanup ${job.id} with discard: true puts them back`;
}
