import type { BriefProfile } from '../config/read-settings.ts';
import type { Environment } from '../config/paths.ts';
import { awaitsReview, type JobSummary } from '../store/job-file.ts';
import { quotedLine } from '../util/inert-text.ts';
import { plural } from '../util/plural.ts';

const TOOL_PREFIX = 'mcp__plugin_delegate_workers__';
const MAX_TASKS_LISTED = 8;

/**
 * The SessionStart briefing: the profiles ready to use and this project's tasks waiting for
 * an answer or a review, in a few lines; undefined when there is nothing to say. Given the
 * session, it lists the tasks that session started (`claude --resume` keeps the id, so a resumed
 * session its tasks) and only counts, in one marked line, those of other sessions or of none.
 */
export function sessionBriefing(options: {
  profiles: readonly BriefProfile[];
  defaultProfile: string | undefined;
  jobs: readonly JobSummary[];
  projectDir: string;
  env: Environment;
  session?: string | undefined;
}): string | undefined {
  const ready = options.profiles.filter(
    (profile) => !profile.apiKeyEnv || options.env[profile.apiKeyEnv]?.trim(),
  );
  const inProject = options.jobs.filter(
    (job) =>
      job.project === options.projectDir && (job.state === 'needs_input' || awaitsReview(job)),
  );
  const isMine = (job: JobSummary) =>
    options.session === undefined || job.session === options.session;
  const waiting = inProject.filter(isMine);
  const elsewhere = inProject.filter((job) => !isMine(job));
  if (ready.length === 0 && inProject.length === 0) return undefined;
  const lines = [
    'delegate plugin: hand bulk reading and bounded work to worker models (tools ' +
      `${TOOL_PREFIX}*).`,
  ];
  if (ready.length > 0) {
    const listed = ready.map((profile) => {
      const tag = profile.name === options.defaultProfile ? ' (default)' : '';
      return `${profile.name}${tag}${profile.use ? ` — ${profile.use}` : ''}`;
    });
    lines.push(`Workers ready: ${listed.join('; ')}.`);
  }
  if (waiting.length > 0) {
    lines.push('Tasks waiting for you:');
    for (const job of waiting.slice(0, MAX_TASKS_LISTED)) lines.push(`- ${describeJob(job)}`);
    if (waiting.length > MAX_TASKS_LISTED)
      lines.push(`- …and ${waiting.length - MAX_TASKS_LISTED} more (task_status)`);
  }
  if (elsewhere.length > 0) lines.push(elsewhereLine(elsewhere));
  return lines.join('\n');
}

/** Other sessions' waiting tasks, as one count: theirs to handle, listed only when asked. */
function elsewhereLine(jobs: readonly JobSummary[]): string {
  const questions = jobs.filter((job) => job.state === 'needs_input').length;
  const results = jobs.length - questions;
  const counts = [
    questions ? `${questions} waiting for an answer` : '',
    results ? `${results} for a review` : '',
  ].filter(Boolean);
  return (
    `Not this session's: ${plural(jobs.length, 'task')} of other sessions here (${counts.join(', ')}); ` +
    'task_status lists them if the user asks.'
  );
}

function describeJob(job: JobSummary): string {
  if (job.state === 'needs_input') {
    return `${job.id} needs an answer: ${quotedLine(job.question ?? '', 300)} → task_answer`;
  }
  const verdict = job.state === 'done' && job.verdict ? ` (${job.verdict})` : '';
  return `${job.id} ${job.state}${verdict}, not reviewed → task_result ${job.id}`;
}
