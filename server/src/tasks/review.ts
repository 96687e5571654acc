/**
 * The reviewer pass: after a task's work is done and tested, a reviewer (the `reviewer` worker
 * role, on its own profile) grades the diff against the definition of done, with read-only
 * tools. Its verdict and reasons go into the result beside the test facts; they never change
 * the test verdict.
 */
import { runAgentLoop } from '../agent/agent-loop.ts';
import type { AgentDefinition } from '../agent/agents.ts';
import { FILE_AND_SHELL_TOOLS, type WorkerToolContext } from '../agent/worker-tools/index.ts';
import { isCliFormat } from '../config/config-rules.ts';
import type { LoadedConfig } from '../profiles/load-config.ts';
import { approved, findProfile } from '../profiles/resolve-profile.ts';
import type { GenerateRequest, GenerateResult } from '../wire/spec.ts';
import { UserError, errorMessage } from '../util/user-error.ts';
import type { ResolvedProfile } from '../config/resolved-profile.ts';
import type { JobFile, ReviewFacts, VerificationFacts } from '../store/job-file.ts';
import { plural } from '../util/plural.ts';

/** Diff text the reviewer gets inline; the rest it reads from the files. */
const MAX_DIFF_CHARS = 60_000;
const MAX_NOTES_CHARS = 2_000;
const TEST_TAIL_CHARS = 1_500;
/** Turns of the reviewer pass: enough to open the changed files and their callers. */
export const REVIEW_MAX_TURNS = 12;

const DEFAULT_REVIEWER_ROLE =
  'You are a reviewer: you grade a change against a definition of done. You read; you do not modify ' +
  'anything. Answer with `VERDICT: pass` or `VERDICT: fail` on the first line, then one line per ' +
  'criterion (met or not, with evidence such as file:line), then the problems, blocking ones first.';

/**
 * The reviewer's profile: `tasks.reviewProfile` when configured; else the reviewer agent's
 * profile hint; else a profile other than the worker's (the default one first, then in
 * config order), so a second model checks the first; else the worker's own. A task on a
 * local profile is only ever reviewed on a local profile unless the user named one: its code
 * may be private. The reviewer calls a model API, so a CLI engine's profile never reviews:
 * undefined when no other profile may. A configured or hinted profile awaiting the user's
 * approval refuses the task (project-approval.ts); the fallbacks never consider one.
 */
export function pickReviewProfile(
  config: LoadedConfig,
  worker: ResolvedProfile,
  agentHint: string | undefined,
): string | undefined {
  const configured = config.tasks.reviewProfile;
  if (configured !== undefined) {
    const profile = findProfile(config, configured);
    if (!profile) {
      throw new UserError(
        `tasks.reviewProfile "${configured}" is not a profile (profiles: ${[...config.profiles.keys()].join(', ')}). ` +
          'Set it to one of them or remove it.',
      );
    }
    if (isCliFormat(profile.format)) {
      throw new UserError(
        `tasks.reviewProfile "${configured}" is a CLI engine, and the reviewer calls a model API. ` +
          'Set it to a profile with format openai, anthropic or copilot.',
      );
    }
    return approved(profile).name;
  }
  const allowed = (profile: ResolvedProfile | undefined): profile is ResolvedProfile =>
    profile !== undefined &&
    !isCliFormat(profile.format) &&
    (!worker.local || profile.local === true);
  const hinted = agentHint === undefined ? undefined : findProfile(config, agentHint);
  if (allowed(hinted)) return approved(hinted).name;
  const others = [
    config.defaultProfile === undefined ? undefined : config.profiles.get(config.defaultProfile),
    ...config.profiles.values(),
  ].filter((profile) => allowed(profile) && profile.name !== worker.name);
  return others[0]?.name ?? (allowed(worker) ? worker.name : undefined);
}

export interface ReviewOptions {
  job: JobFile;
  profile: string;
  maxTurns: number;
  /** The `reviewer` agent definition, when one is found (its body is the role). */
  agent: AgentDefinition | undefined;
  /** The change against the task's base; undefined when the task is not in a repository. */
  diff: string | undefined;
  verification: VerificationFacts | undefined;
  toolContext: WorkerToolContext;
  /** A model call on the review profile, counted in the task's cost and budget. */
  callModel(request: GenerateRequest): Promise<GenerateResult>;
  onStep(step: number, activity: string): void;
}

/** Runs the reviewer pass; a failure of the pass itself comes back as verdict `error`. */
export async function reviewWork(options: ReviewOptions): Promise<ReviewFacts> {
  const { job, agent } = options;
  const readOnly = FILE_AND_SHELL_TOOLS.filter(
    (tool) => tool.isReadOnly && (!agent?.tools || agent.tools.includes(tool.name)),
  );
  let modelAnswered: string | undefined;
  try {
    const outcome = await runAgentLoop({
      system: `${agent?.body.trim() || DEFAULT_REVIEWER_ROLE}\n\n${reviewFacts(options.maxTurns)}`,
      task: reviewRequest(job, options.diff, options.verification),
      tools: readOnly,
      maxTurns: options.maxTurns,
      maxOutputTokens: 4_096,
      callModel: async (request) => {
        const result = await options.callModel(request);
        modelAnswered = result.modelAnswered;
        return result;
      },
      toolContext: options.toolContext,
      hooks: {
        onStep: (step, activity) => options.onStep(step, `review: ${activity}`),
        askSupervisor: () =>
          Promise.resolve('No questions in the review: decide from the diff and the files.'),
        takeSteering: () => [],
        onFilesWritten: () => undefined,
      },
    });
    return {
      ...parseVerdict(outcome.summary),
      profile: options.profile,
      ...(modelAnswered ? { modelAnswered } : {}),
      turns: outcome.turns,
    };
  } catch (error) {
    return {
      verdict: 'error',
      notes: `The review could not run: ${errorMessage(error)}`.slice(0, MAX_NOTES_CHARS),
      profile: options.profile,
      ...(modelAnswered ? { modelAnswered } : {}),
      turns: 0,
    };
  }
}

function reviewFacts(maxTurns: number): string {
  return [
    'This is a review pass with read-only tools (read_file, list_files, grep): you cannot run commands',
    'or change files. The test command already ran; its facts are in the request. Do not modify anything.',
    `You have at most ${plural(maxTurns, 'turn')}. Your last message (no tool call) starts with the VERDICT line.`,
  ].join(' ');
}

function reviewRequest(
  job: JobFile,
  diff: string | undefined,
  verification: VerificationFacts | undefined,
): string {
  const tests = verification
    ? `Test command \`${verification.command}\` exited ${verification.exitCode ?? 'without a code'}` +
      `${verification.timedOut ? ' (timed out)' : ''}. Output tail:\n${verification.outputTail.slice(-TEST_TAIL_CHARS)}`
    : 'No test command was given: nothing was run.';
  const change =
    diff === undefined
      ? 'The task directory is not a git repository: read the files the task names.'
      : diff.trim() === ''
        ? 'The diff is EMPTY: the worker changed nothing.'
        : diff.length > MAX_DIFF_CHARS
          ? `${diff.slice(0, MAX_DIFF_CHARS)}\n[diff truncated: ${diff.length - MAX_DIFF_CHARS} more characters; read the changed files]`
          : diff;
  return [
    'Grade this change against the definition of done.',
    `\nTask given to the worker:\n${job.task}`,
    `\nDefinition of done:\n${job.definitionOfDone ?? '(none given: use the task as asked, tests pass, nothing else broke)'}`,
    `\n${tests}`,
    `\nThe change (diff against the task's base):\n${change}`,
  ].join('\n');
}

/** `VERDICT: pass|fail` (first one found) and the rest of the answer as notes. */
export function parseVerdict(answer: string): Pick<ReviewFacts, 'verdict' | 'notes'> {
  const match = /^[\s*#>_`]*VERDICT\s*:\s*[*_`]*\s*(pass|fail)\b.*$/im.exec(answer);
  const verdict = match ? (match[1]!.toLowerCase() as 'pass' | 'fail') : 'unclear';
  const notes = (match ? answer.replace(match[0], '') : answer).trim();
  return {
    verdict,
    notes: (notes || (match ? '(no reasons given)' : '(empty answer)')).slice(0, MAX_NOTES_CHARS),
  };
}
