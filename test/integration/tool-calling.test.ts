import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../../server/src/providers/create-client.ts';
import type { GenerateRequest, Message } from '../../server/src/wire/spec.ts';
import { startFakeProvider, type FakeProvider } from '../helpers/fake-provider.ts';

let fake: FakeProvider | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

const TOOLS = [
  {
    name: 'read_file',
    description: 'Reads a file',
    inputSchema: { type: 'object', properties: { path: { type: 'string' } } },
  },
  {
    name: 'grep',
    description: 'Searches',
    inputSchema: { type: 'object', properties: { pattern: { type: 'string' } } },
  },
];

/** A conversation after one tool round: the model reasoned, called a tool, and got its result. */
function conversation(reasoningBy: string, signature?: string): GenerateRequest {
  const history: Message[] = [
    { role: 'user', content: [{ type: 'text', text: 'What is in notes.txt?' }] },
    {
      role: 'assistant',
      content: [
        {
          type: 'thinking',
          thinking: 'I should read the file.',
          model: reasoningBy,
          ...(signature ? { signature } : {}),
        },
        { type: 'text', text: 'Reading it.' },
        { type: 'tool_use', id: 'call_7', name: 'read_file', input: { path: 'notes.txt' } },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', toolUseId: 'call_7', content: 'no such file', isError: true },
      ],
    },
  ];
  return { system: 'Be brief.', messages: history, tools: TOOLS, maxOutputTokens: 100 };
}

describe('openai wire format', () => {
  it('sends tools, tool calls and tool results, and replays reasoning to a DeepSeek-style model', async () => {
    fake = await startFakeProvider({ respond: () => ({ text: 'done' }) });
    await createClient('openai', { baseUrl: fake.openaiBaseUrl, model: 'deepseek-chat' }).generate(
      conversation('deepseek-chat'),
    );
    const body = fake.requests[0]!.body;
    expect(body.tools[0]).toEqual({
      type: 'function',
      function: {
        name: 'read_file',
        description: 'Reads a file',
        parameters: TOOLS[0]!.inputSchema,
      },
    });
    expect(body.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'What is in notes.txt?' },
      {
        role: 'assistant',
        content: 'Reading it.',
        reasoning_content: 'I should read the file.',
        tool_calls: [
          {
            id: 'call_7',
            type: 'function',
            function: { name: 'read_file', arguments: '{"path":"notes.txt"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_7', content: 'ERROR: no such file' },
    ]);
  });

  it('does not replay reasoning to other models, nor reasoning another model produced', async () => {
    fake = await startFakeProvider({ respond: () => ({ text: 'done' }) });
    await createClient('openai', { baseUrl: fake.openaiBaseUrl, model: 'gpt-4o' }).generate(
      conversation('gpt-4o'),
    );
    await createClient('openai', { baseUrl: fake.openaiBaseUrl, model: 'deepseek-chat' }).generate(
      conversation('qwen3:8b'),
    );
    await createClient('openai', {
      baseUrl: fake.openaiBaseUrl,
      model: 'gpt-4o',
      replayReasoning: 'always',
    }).generate(conversation('gpt-4o'));
    const replayed = fake.requests.map((request) => request.body.messages[2].reasoning_content);
    expect(replayed).toEqual([undefined, undefined, 'I should read the file.']);
  });

  it('streams a tool call back as a tool_use block', async () => {
    fake = await startFakeProvider({
      respond: () => ({
        toolUses: [{ id: 'call_1', name: 'grep', input: { pattern: 'TODO' } }],
        chunkSize: 3,
      }),
    });
    const result = await createClient('openai', {
      baseUrl: fake.openaiBaseUrl,
      model: 'm',
    }).generate(conversation('m'));
    expect(result.stopReason).toBe('tool_use');
    expect(result.content).toEqual([
      { type: 'tool_use', id: 'call_1', name: 'grep', input: { pattern: 'TODO' } },
    ]);
  });

  it('handles local-server quirks: tool calls without index, finish_reason "stop" on a tool call, no usage', async () => {
    const chunk = (delta: unknown, finish: string | null = null) =>
      `data: ${JSON.stringify({ model: 'qwen3:8b', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const body = [
      chunk({ role: 'assistant', content: '' }),
      chunk({
        tool_calls: [
          {
            id: 'call_a',
            type: 'function',
            function: { name: 'read_file', arguments: '{"path":"a.txt"}' },
          },
        ],
      }),
      chunk({
        tool_calls: [
          {
            id: 'call_b',
            type: 'function',
            function: { name: 'grep', arguments: '{"pattern":"x"}' },
          },
        ],
      }),
      chunk({}, 'stop'),
      'data: [DONE]\n\n',
    ].join('');
    fake = await startFakeProvider({ respond: () => ({ kind: 'raw', body }) });
    const result = await createClient('openai', {
      baseUrl: fake.openaiBaseUrl,
      model: 'qwen3:8b',
    }).generate(conversation('m'));
    expect(result.stopReason).toBe('tool_use');
    expect(result.rawStopReason).toBe('stop');
    expect(result.content).toEqual([
      { type: 'tool_use', id: 'call_a', name: 'read_file', input: { path: 'a.txt' } },
      { type: 'tool_use', id: 'call_b', name: 'grep', input: { pattern: 'x' } },
    ]);
    expect(result.usage).toEqual({
      inputTokens: 0,
      outputTokens: 0,
      cachedInputTokens: 0,
      cacheWriteTokens: 0,
      cacheWrite1hTokens: 0,
      reasoningTokens: 0,
    });
  });
});

describe('anthropic wire format', () => {
  it('replays signed thinking intact, drops unsigned thinking, sends tool results, caches the last tool', async () => {
    fake = await startFakeProvider({ respond: () => ({ text: 'done' }) });
    const client = createClient('anthropic', { baseUrl: fake.url, model: 'claude-like' });
    await client.generate(conversation('claude-like', 'sig-123'));
    await client.generate(conversation('gpt-4o'));
    const [signed, unsigned] = fake.requests.map((request) => request.body);
    expect(signed.messages[1].content[0]).toEqual({
      type: 'thinking',
      thinking: 'I should read the file.',
      signature: 'sig-123',
    });
    expect(unsigned.messages[1].content.map((block: { type: string }) => block.type)).toEqual([
      'text',
      'tool_use',
    ]);
    expect(signed.messages[2].content).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'call_7',
        content: 'no such file',
        is_error: true,
        cache_control: { type: 'ephemeral' },
      },
    ]);
    expect(signed.tools.map((tool: { cache_control?: unknown }) => tool.cache_control)).toEqual([
      undefined,
      { type: 'ephemeral' },
    ]);
  });

  it('streams tool_use input from input_json_delta pieces', async () => {
    fake = await startFakeProvider({
      respond: () => ({
        thinking: 'hmm',
        toolUses: [{ id: 'toolu_1', name: 'grep', input: { pattern: 'a "quoted" thing' } }],
        chunkSize: 2,
      }),
    });
    const result = await createClient('anthropic', {
      baseUrl: fake.url,
      model: 'claude-like',
    }).generate(conversation('x'));
    expect(result.stopReason).toBe('tool_use');
    expect(result.content).toEqual([
      { type: 'thinking', thinking: 'hmm', signature: 'fake-signature', model: 'claude-like' },
      { type: 'tool_use', id: 'toolu_1', name: 'grep', input: { pattern: 'a "quoted" thing' } },
    ]);
  });
});
