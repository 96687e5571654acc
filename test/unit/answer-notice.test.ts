import { describe, expect, it } from 'vitest';
import { answerNotice } from '../../server/src/calls/answer-notice.ts';
import type { GenerateResult } from '../../server/src/wire/spec.ts';

const usage = (outputTokens: number) => ({
  inputTokens: 10,
  outputTokens,
  cachedInputTokens: 0,
  cacheWriteTokens: 0,
  cacheWrite1hTokens: 0,
  reasoningTokens: 0,
});

function notice(fields: Partial<GenerateResult>, advice?: string) {
  return answerNotice(
    { stopReason: 'end', rawStopReason: undefined, usage: usage(0), ...fields },
    8_192,
    advice,
  );
}

describe('answerNotice', () => {
  it('says nothing about an answer that ended on its own or on a tool call', () => {
    expect(notice({ stopReason: 'end', rawStopReason: 'stop' })).toBeUndefined();
    expect(notice({ stopReason: 'tool_use', rawStopReason: 'tool_use' })).toBeUndefined();
    expect(notice({ stopReason: 'other', rawStopReason: 'pause_turn' })).toBeUndefined();
  });

  it('names the output tokens of a cut-off (the limit when no usage came) and what to do', () => {
    expect(
      notice({ stopReason: 'max_tokens', rawStopReason: 'length', usage: usage(1234) }),
    ).toEqual({
      short: 'cut off at 1,234 output tokens',
      line: '[cut off at 1,234 output tokens — raise max_output_tokens or narrow the task]',
    });
    expect(
      notice({ stopReason: 'max_tokens', rawStopReason: 'max_tokens' }, 'split it')?.line,
    ).toBe('[cut off at 8,192 output tokens — split it]');
    expect(
      notice({
        stopReason: 'max_tokens',
        rawStopReason: 'model_context_window_exceeded',
        usage: usage(900),
      })?.line,
    ).toBe(
      "[cut off at 900 output tokens: the model's context window is full — send fewer files or narrow the task]",
    );
  });

  it('reports a filtered answer and a refusal in the model’s own words', () => {
    expect(notice({ stopReason: 'content_filter', rawStopReason: 'content_filter' })).toEqual({
      short: 'content filtered',
      line: "[content filtered: the provider's filter withheld part of the answer (content_filter) — what came through is below]",
    });
    expect(
      notice({ stopReason: 'refusal', rawStopReason: 'stop', refusal: "I can't help with that." }),
    ).toEqual({
      short: 'refused',
      line: `[refused by the model: "I can't help with that."]`,
    });
    expect(notice({ stopReason: 'refusal', rawStopReason: 'refusal' })?.line).toBe(
      '[refused: the provider stopped the answer (stop reason refusal) — rephrase the task or use another profile]',
    );
  });
});
