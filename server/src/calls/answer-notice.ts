import type { GenerateResult } from '../wire/spec.ts';
import { plural } from '../util/plural.ts';

/** What the caller is told about an answer that did not end on its own. */
export interface AnswerNotice {
  /** For a usage line: `cut off at 8,192 output tokens`, `refused`, `content filtered`. */
  short: string;
  /** The notice that goes first in a result, e.g. `[cut off at 8,192 output tokens — …]`. */
  line: string;
}

/**
 * Says so when an answer was cut off, filtered or refused; undefined for an answer that ended on
 * its own (or on a tool call). `maxOutputTokens` stands in when the endpoint reported no usage;
 * `cutOffAdvice` is what the caller can do about a cut-off.
 */
export function answerNotice(
  result: Pick<GenerateResult, 'stopReason' | 'rawStopReason' | 'refusal' | 'usage'>,
  maxOutputTokens: number,
  cutOffAdvice = 'raise max_output_tokens or narrow the task',
): AnswerNotice | undefined {
  const raw = result.rawStopReason ?? '';
  switch (result.stopReason) {
    case 'max_tokens': {
      const tokens = result.usage.outputTokens || maxOutputTokens;
      const short = `cut off at ${plural(tokens, 'output token')}`;
      if (raw === 'model_context_window_exceeded') {
        const why = `${short}: the model's context window is full`;
        return { short, line: `[${why} — send fewer files or narrow the task]` };
      }
      return { short, line: `[${short} — ${cutOffAdvice}]` };
    }
    case 'content_filter':
      return {
        short: 'content filtered',
        line: `[content filtered: the provider's filter withheld part of the answer (${raw}) — what came through is below]`,
      };
    case 'refusal': {
      const words = result.refusal?.trim();
      return {
        short: 'refused',
        line: words
          ? `[refused by the model: "${words}"]`
          : `[refused: the provider stopped the answer (stop reason ${raw}) — rephrase the task or use another profile]`,
      };
    }
    default:
      return undefined;
  }
}
