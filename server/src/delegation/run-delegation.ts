import { PIN_HINT } from '../profiles/discover-local.ts';
import { loadConfig } from '../profiles/load-config.ts';
import { profileForCall } from '../calls/choose-profile.ts';
import { isWorkerFailure, noteOutcome, projectKey, type OutcomeRecord } from '../calls/outcomes.ts';
import { taskKind } from '../calls/task-kind.ts';
import { outputsDir, resultsDir } from '../config/paths.ts';
import { answerNotice, type AnswerNotice } from '../calls/answer-notice.ts';
import { callModel, type ModelCallResult } from '../calls/call-model.ts';
import { isSameModel } from '../providers/reasoning.ts';
import { textOf, type GenerateResult } from '../wire/spec.ts';
import type { AppContext } from '../profiles/app-context.ts';
import { UserError } from '../util/user-error.ts';
import { formatBytes } from '../util/format-bytes.ts';
import { collectFiles, type CollectedFile } from './collect-files.ts';
import { placeAnswer, resolveWriteTarget } from './place-answer.ts';
import type { ResolvedProfile } from '../config/resolved-profile.ts';
import { inertLine } from '../util/inert-text.ts';
import { formatUsd } from '../util/format-usd.ts';
import { plural } from '../util/plural.ts';

export interface DelegateInput {
  task: string;
  files?: readonly string[];
  profile?: string;
  writeTo?: string;
  maxOutputTokens?: number;
  /** Answers longer than this go to a file (batches share a smaller budget). */
  inlineLimit?: number;
}

export const DEFAULT_MAX_OUTPUT_TOKENS = 8_192;
export const DEFAULT_MAX_INPUT_KB = 2_048;

const SYSTEM_PROMPT = [
  'You are a worker model. A coding assistant delegated a task to you and sent you the full',
  'content of the files it concerns. Answer the task directly and concisely. Quote exact lines,',
  'numbers, names and paths where they matter. If the files do not hold what the task needs,',
  'say so plainly instead of guessing.',
].join(' ');

/**
 * One-shot delegation: files go from disk to the worker, never through the supervisor; the
 * supervisor gets the answer (or a preview and a path) and one usage line.
 */
export async function runDelegation(
  input: DelegateInput,
  context: AppContext,
  signal?: AbortSignal,
  onWaiting?: (what: string | undefined) => void,
): Promise<string> {
  const config = loadConfig(context.dataHome, context.projectDir, context.env);
  const kind = taskKind(input.task);
  const { profile, route } = await profileForCall(
    input.profile,
    { work: 'one-shot', kind },
    context,
    config,
  );
  const capBytes = (profile.maxInputKb ?? DEFAULT_MAX_INPUT_KB) * 1024;
  const files = await collectFiles(
    input.files ?? [],
    context.projectDir,
    capBytes,
    outputsDir(context.dataHome),
  );
  const target =
    input.writeTo === undefined
      ? undefined
      : await resolveWriteTarget(input.writeTo, context.projectDir);
  const maxOutputTokens =
    input.maxOutputTokens ?? profile.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS;
  const startedAt = Date.now();
  const outcome = (
    fields: Pick<OutcomeRecord, 'profile' | 'passed' | 'by' | 'costUsd' | 'cutOff'>,
  ) =>
    noteOutcome(context.dataHome, {
      ts: new Date().toISOString(),
      work: 'one-shot',
      project: projectKey(context.projectDir),
      kind,
      ms: Date.now() - startedAt,
      ...fields,
    });
  const served = await callModel(
    {
      profile,
      request: {
        system: SYSTEM_PROMPT,
        messages: [
          { role: 'user', content: [{ type: 'text', text: buildPrompt(input.task, files) }] },
        ],
        maxOutputTokens,
      },
      bytesSent: files.reduce((sum, file) => sum + file.bytes, 0),
      ...(signal ? { signal } : {}),
      ...(onWaiting ? { onWaiting } : {}),
    },
    context,
  ).catch(async (error: unknown) => {
    if (isWorkerFailure(error)) {
      await outcome({ profile: profile.name, passed: false, by: 'error', costUsd: 0 });
    }
    throw error;
  });
  const answer = textOf(served.result.content).trim();
  const notice = answerNotice(served.result, maxOutputTokens);
  await outcome({
    profile: served.profile.name,
    passed: answer !== '' && notice === undefined,
    by: 'answer',
    costUsd: served.costUsd,
    ...(served.result.stopReason === 'max_tokens' ? { cutOff: true } : {}),
  });
  if (!answer) throw new UserError(emptyAnswerMessage(served.profile, served.result, notice));
  const shown = await placeAnswer(answer, {
    ...(target !== undefined ? { target } : {}),
    resultsDir: resultsDir(context.dataHome),
    now: context.now(),
    ...(input.inlineLimit ? { inlineLimit: input.inlineLimit } : {}),
  });
  // First, so a cut-off, filtered or refused answer never reads as a complete one.
  const head = notice ? `${notice.line}\n\n` : '';
  return `${head}${shown}\n\n${usageLine(served, files, notice)}${route ? `\n${route.reason}` : ''}`;
}

export function buildPrompt(task: string, files: readonly CollectedFile[]): string {
  // Documents first, the question last: long-context models answer better that way.
  const documents = files.map(
    (file) => `<file path="${file.display}" bytes="${file.bytes}">\n${file.text}\n</file>`,
  );
  return [...documents, `<task>\n${task}\n</task>`].join('\n\n');
}

function usageLine(
  served: ModelCallResult,
  files: readonly CollectedFile[],
  notice: AnswerNotice | undefined,
): string {
  const { profile, result } = served;
  // The endpoint names the model that answered: its words, escaped onto this line.
  const answered = inertLine(result.modelAnswered, 120);
  const model =
    result.modelAnswered === profile.model
      ? profile.model
      : isSameModel(profile.model, result.modelAnswered)
        ? `${profile.model} (answered by ${answered})`
        : `${profile.model} (answered by ${answered}: NOT the model asked for)`;
  const { usage } = result;
  const sent = files.reduce((sum, file) => sum + file.bytes, 0);
  const parts = [
    `profile ${profile.name}`,
    `model ${model}`,
    `${tokens(usage.inputTokens)} in${cacheNote(usage)} / ${tokens(usage.outputTokens)} out tokens`,
    ...(notice ? [notice.short] : []),
    `${(result.latencyMs / 1000).toFixed(1)} s`,
    `sent ${formatBytes(sent)} from ${plural(files.length, 'file')}`,
    ...(served.costUsd > 0 ? [formatUsd(served.costUsd)] : []),
    ...(result.attempts > 1 ? [`${result.attempts} attempts`] : []),
    ...(served.failedOverFrom ? [`failed over from ${served.failedOverFrom}`] : []),
    ...(result.routedVia ? [`routed via ${result.routedVia}`] : []),
  ];
  const discovered = profile.source === 'discovered' ? ` (${profile.origin}; ${PIN_HINT})` : '';
  return `[delegate: ${parts.join(' · ')}]${discovered}`;
}

const tokens = (count: number) => count.toLocaleString('en-US');

/** The cached parts of the input, when there are any. */
function cacheNote(usage: GenerateResult['usage']): string {
  if (!usage.cachedInputTokens && !usage.cacheWriteTokens) return '';
  return ` (${tokens(usage.cachedInputTokens)} cached, ${tokens(usage.cacheWriteTokens)} written to cache)`;
}

function emptyAnswerMessage(
  profile: ResolvedProfile,
  result: GenerateResult,
  notice: AnswerNotice | undefined,
): string {
  const who = `Worker profile "${profile.name}" (model ${result.modelAnswered})`;
  // A refusal's own words are the thing to report; "try again" would hide them.
  if (notice) {
    const thought = result.content.some((block) => block.type === 'thinking');
    return `${who} returned no answer text${thought ? ' (it was still reasoning)' : ''}: ${notice.line}`;
  }
  return `${who} returned no answer text (stop reason: ${result.rawStopReason ?? 'none'}; try again or use another profile).`;
}
