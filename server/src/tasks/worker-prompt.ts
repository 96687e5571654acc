import type { JobFile } from '../store/job-file.ts';
import { plural } from '../util/plural.ts';

const DEFAULT_ROLE = [
  'You are an autonomous software engineer working alone in a disposable git worktree (your current',
  'directory). Work in small verified steps: read before you edit, run the tests you were given, keep',
  'changes focused on the task. Never push, merge or switch branches: the supervisor reviews and merges',
  'your work. Use report_progress at each milestone. Use ask_supervisor only when you are blocked and',
  'cannot decide safely yourself.',
].join(' ');

/** The worker's system prompt: the agent's body (or the default role) plus the task's facts. */
export function workerPrompt(job: JobFile, agentBody?: string): string {
  const facts = [
    `Task directory: ${job.workdir}`,
    job.testCommand ? `The supervisor verifies your work with: ${job.testCommand}` : undefined,
    job.definitionOfDone ? `Definition of done: ${job.definitionOfDone}` : undefined,
    `You have at most ${plural(job.maxTurns, 'turn')}.`,
    'Git metadata is off limits: never create, edit, move or replace a .git file or folder anywhere in the task directory (not even with git init; use $TMPDIR for scratch repositories). Doing so fails the task. Your changes are committed for you at the end.',
    'When you are done, answer WITHOUT calling a tool: a concise summary of what you changed (files), how you verified it, and anything left open.',
  ].filter(Boolean);
  return `${agentBody?.trim() || DEFAULT_ROLE}\n\n${facts.join('\n')}`;
}
