import { describe, expect, it } from 'vitest';
import {
  AnthropicStream,
  type WireEvent,
} from '../../server/src/providers/anthropic/anthropic-stream.ts';
import { toRequestBody } from '../../server/src/providers/anthropic/anthropic-request.ts';
import { toWireMessages } from '../../server/src/providers/openai/openai-messages.ts';
import { OpenAiStream, type ChatChunk } from '../../server/src/providers/openai/openai-stream.ts';
import type { Message } from '../../server/src/wire/spec.ts';

const URL = 'http://127.0.0.1:1/v1';

/** Chat Completions chunks as openai-node's `ChatCompletionChunk` documents them. */
function openaiChunks(deltas: object[], finishReason: string): ChatChunk[] {
  const chunk = (delta: object, finish_reason: string | null = null) => ({
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    model: 'gpt-test',
    choices: [{ index: 0, delta, finish_reason }],
  });
  return [
    chunk({ role: 'assistant', content: '' }),
    ...deltas.map((delta) => chunk(delta)),
    chunk({}, finishReason),
  ];
}

function parseOpenAi(chunks: ChatChunk[]) {
  const stream = new OpenAiStream(URL);
  for (const chunk of chunks) stream.absorb(chunk);
  return stream.result('gpt-test');
}

/** Messages stream events as anthropic-sdk-typescript's `RawMessageStreamEvent` documents them. */
function anthropicEvents(blocks: object[], delta: object): WireEvent[] {
  return [
    {
      type: 'message_start',
      message: { model: 'claude-test', usage: { input_tokens: 9, output_tokens: 1 } },
    },
    ...blocks.flatMap((content_block, index) => [
      { type: 'content_block_start', index, content_block } as WireEvent,
      { type: 'content_block_stop', index },
    ]),
    { type: 'message_delta', delta: delta, usage: { output_tokens: 42 } },
    { type: 'message_stop' },
  ];
}

function parseAnthropic(events: WireEvent[]) {
  const stream = new AnthropicStream(URL);
  for (const event of events) stream.absorb(event);
  return stream.result('claude-test');
}

describe('OpenAI stream: finish_reason and refusal', () => {
  it('maps length to max_tokens and content_filter to content_filter, keeping the raw word', () => {
    const cut = parseOpenAi(openaiChunks([{ content: 'half an ans' }], 'length'));
    expect(cut).toMatchObject({ stopReason: 'max_tokens', rawStopReason: 'length' });
    expect(cut.content).toEqual([{ type: 'text', text: 'half an ans' }]);
    const filtered = parseOpenAi(openaiChunks([{ content: 'Some' }], 'content_filter'));
    expect(filtered).toMatchObject({
      stopReason: 'content_filter',
      rawStopReason: 'content_filter',
    });
  });

  it('accumulates delta.refusal pieces into the refusal, apart from the answer text', () => {
    const refused = parseOpenAi(
      openaiChunks([{ refusal: "I'm sorry, " }, { refusal: "I can't help with that." }], 'stop'),
    );
    expect(refused).toMatchObject({
      stopReason: 'refusal',
      rawStopReason: 'stop',
      refusal: "I'm sorry, I can't help with that.",
      content: [],
    });
  });

  it('reads the refusal of a whole (non-streamed) message too', () => {
    const stream = new OpenAiStream(URL);
    stream.absorb({
      model: 'gpt-test',
      choices: [{ message: { content: null, refusal: 'No.' }, finish_reason: 'stop' }],
    });
    expect(stream.result('gpt-test')).toMatchObject({ stopReason: 'refusal', refusal: 'No.' });
  });

  it('keeps an empty refusal field from reading as a refusal', () => {
    const plain = parseOpenAi(openaiChunks([{ content: 'fine', refusal: null }], 'stop'));
    expect(plain.stopReason).toBe('end');
    expect(plain.refusal).toBeUndefined();
  });
});

describe('Anthropic stream: stop_reason, stop_details and unknown blocks', () => {
  it.each([
    ['end_turn', 'end'],
    ['max_tokens', 'max_tokens'],
    ['model_context_window_exceeded', 'max_tokens'],
    ['refusal', 'refusal'],
    ['pause_turn', 'other'],
  ])('%s → %s, raw kept', (raw, normalised) => {
    const result = parseAnthropic(
      anthropicEvents([{ type: 'text', text: 'x' }], { stop_reason: raw, stop_sequence: null }),
    );
    expect(result).toMatchObject({ stopReason: normalised, rawStopReason: raw });
  });

  it('takes a refusal’s explanation and category from stop_details', () => {
    const result = parseAnthropic(
      anthropicEvents([{ type: 'text', text: '' }], {
        stop_reason: 'refusal',
        stop_sequence: null,
        stop_details: {
          type: 'refusal',
          category: 'cyber',
          explanation: 'This could enable malware.',
        },
      }),
    );
    expect(result.refusal).toBe('This could enable malware. (category cyber)');
  });

  it('keeps redacted_thinking and any unknown block opaque, exactly as received', () => {
    const redacted = { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4a' };
    const server = { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} };
    const events = anthropicEvents([redacted, server, { type: 'text', text: 'ok' }], {
      stop_reason: 'end_turn',
    });
    // A server tool's input streams like a tool_use's.
    events.splice(4, 0, {
      type: 'content_block_delta',
      index: 1,
      delta: { type: 'input_json_delta', partial_json: '{"query":"x"}' },
    });
    const result = parseAnthropic(events);
    expect(result.content).toEqual([
      { type: 'opaque', format: 'anthropic', block: redacted },
      { type: 'opaque', format: 'anthropic', block: { ...server, input: { query: 'x' } } },
      { type: 'text', text: 'ok' },
    ]);
  });
});

describe('opaque blocks go back only to their own wire format', () => {
  const redacted = { type: 'redacted_thinking', data: 'c2VjcmV0IHJlYXNvbmluZw==' };
  const history: Message[] = [
    { role: 'user', content: [{ type: 'text', text: 'Go' }] },
    {
      role: 'assistant',
      content: [
        { type: 'opaque', format: 'anthropic', block: redacted },
        { type: 'tool_use', id: 't1', name: 'grep', input: { pattern: 'a' } },
      ],
    },
    { role: 'user', content: [{ type: 'tool_result', toolUseId: 't1', content: 'none' }] },
  ];

  it('replays them byte for byte in an Anthropic request', () => {
    const body = toRequestBody(
      { baseUrl: URL, model: 'claude-test' },
      { messages: history, maxOutputTokens: 10 },
    );
    const messages = body.messages as Array<{ content: object[] }>;
    expect(messages[1]!.content[0]).toEqual(redacted);
    expect(JSON.stringify(body)).toContain(JSON.stringify(redacted));
  });

  it('leaves them out of an OpenAI request', () => {
    const wire = toWireMessages({ messages: history, maxOutputTokens: 10 }, () => true);
    expect(JSON.stringify(wire)).not.toContain('redacted_thinking');
  });
});
