import { describe, it, expect, afterEach } from 'vitest';
import {
  byAssistantTurn,
  startFakeProvider,
  type FakeProvider,
  type FakeProviderOptions,
} from '../helpers/fake-provider.ts';
import { scaledMs } from '../helpers/timing.ts';

const providers: FakeProvider[] = [];

afterEach(async () => {
  await Promise.all(providers.splice(0).map((provider) => provider.close()));
});

async function start(options?: FakeProviderOptions): Promise<FakeProvider> {
  const provider = await startFakeProvider(options);
  providers.push(provider);
  return provider;
}

function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

interface SseEvent {
  event: string | undefined;
  data: string;
}

async function readSse(response: Response): Promise<SseEvent[]> {
  const text = await response.text();
  return text
    .split('\n\n')
    .filter((block) => block.length > 0)
    .map((block) => {
      const lines = block.split('\n');
      const event = lines.find((line) => line.startsWith('event: '))?.slice('event: '.length);
      const data = lines.find((line) => line.startsWith('data: '))?.slice('data: '.length) ?? '';
      return { event, data };
    });
}

const readJson = (response: Response): Promise<any> => response.json();
const json = (events: SseEvent[]): any[] =>
  events.filter((event) => event.data !== '[DONE]').map((event) => JSON.parse(event.data));

describe('fake provider, OpenAI wire format', () => {
  it('streams text in chunks with usage when include_usage is set', async () => {
    const provider = await start({
      respond: [
        { text: 'Hello, streaming world!', chunkSize: 5, usage: { input: 7, cachedInput: 3 } },
      ],
    });
    const response = await post(
      `${provider.openaiBaseUrl}/chat/completions`,
      { model: 'gpt-x', stream: true, stream_options: { include_usage: true }, messages: [] },
      { Authorization: 'Bearer key' },
    );
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const events = await readSse(response);
    expect(events.at(-1)?.data).toBe('[DONE]');
    const chunks = json(events);
    expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk')).toBe(true);
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe('Hello, streaming world!');
    expect(chunks.filter((chunk) => chunk.choices[0]?.delta.content).length).toBe(5);
    expect(chunks.at(-2).choices[0].finish_reason).toBe('stop');
    expect(chunks.at(-1)).toMatchObject({
      model: 'gpt-x',
      choices: [],
      usage: {
        prompt_tokens: 7,
        completion_tokens: Math.ceil(23 / 4) + 1,
        prompt_tokens_details: { cached_tokens: 3 },
        completion_tokens_details: { reasoning_tokens: 0 },
      },
    });
    const [request] = provider.requests;
    expect(request).toMatchObject({ index: 0, format: 'openai', method: 'POST' });
    expect(request?.path).toBe('/v1/chat/completions');
    expect(request?.headers.authorization).toBe('Bearer key');
    expect(request?.body.model).toBe('gpt-x');
  });

  it('sends reasoning_content before the text and no usage chunk unless asked', async () => {
    const provider = await start({ respond: [{ thinking: 'let me think', text: 'answer' }] });
    const response = await post(`${provider.openaiBaseUrl}/chat/completions`, {
      model: 'm',
      stream: true,
    });
    const deltas = json(await readSse(response)).map((chunk) => chunk.choices[0].delta);
    const reasoningAt = deltas.findIndex((delta) => delta.reasoning_content === 'let me think');
    const textAt = deltas.findIndex((delta) => delta.content === 'answer');
    expect(reasoningAt).toBeGreaterThan(0);
    expect(textAt).toBeGreaterThan(reasoningAt);
  });

  it('streams tool calls with split arguments and finish_reason tool_calls', async () => {
    const input = { path: 'src/some/long/file/name.ts', lines: [1, 2, 3] };
    const provider = await start({
      respond: [{ toolUses: [{ name: 'read_file', input }], chunkSize: 10 }],
    });
    const response = await post(`${provider.openaiBaseUrl}/chat/completions`, {
      model: 'm',
      stream: true,
    });
    const chunks = json(await readSse(response));
    const calls = chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []);
    expect(calls.length).toBeGreaterThan(1);
    expect(calls[0]).toMatchObject({ index: 0, type: 'function', function: { name: 'read_file' } });
    expect(calls[0].id).toMatch(/^call_fake_/);
    const args = calls.map((call) => call.function.arguments).join('');
    expect(JSON.parse(args)).toEqual(input);
    expect(chunks.at(-1).choices[0].finish_reason).toBe('tool_calls');
  });

  it('answers a chat.completion object when not streaming', async () => {
    const provider = await start({
      respond: [{ text: 'hi', thinking: 'hm', toolUses: [{ id: 'c1', name: 't', input: {} }] }],
    });
    const response = await post(`${provider.openaiBaseUrl}/chat/completions`, { model: 'm' });
    expect(response.headers.get('content-type')).toBe('application/json');
    const body = await readJson(response);
    expect(body).toMatchObject({
      object: 'chat.completion',
      model: 'm',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'hi',
            reasoning_content: 'hm',
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 't', arguments: '{}' } }],
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: { completion_tokens: 2 },
    });
  });
});

describe('fake provider, Anthropic wire format', () => {
  it('streams thinking, text and tool_use blocks in the Messages event order', async () => {
    const provider = await start({
      respond: [
        {
          thinking: 'plan',
          text: 'Reading it.',
          toolUses: [{ name: 'Read', input: { file_path: '/a' } }],
          usage: { cachedInput: 50 },
        },
      ],
    });
    const response = await post(`${provider.url}/v1/messages?beta=true`, {
      model: 'claude-x',
      stream: true,
      messages: [{ role: 'user', content: 'go' }],
    });
    const events = await readSse(response);
    expect(events.map((event) => event.event)).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const data = json(events);
    expect(data.every((item, i) => item.type === events[i]?.event)).toBe(true);
    expect(data[0].message).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'claude-x',
      content: [],
      usage: { output_tokens: 1, cache_read_input_tokens: 50, cache_creation_input_tokens: 0 },
    });
    expect(data[2].content_block.type).toBe('thinking');
    expect(data[3].delta).toEqual({ type: 'thinking_delta', thinking: 'plan' });
    expect(data[4].delta).toEqual({ type: 'signature_delta', signature: 'fake-signature' });
    expect(data[7]).toMatchObject({ index: 1, delta: { type: 'text_delta', text: 'Reading it.' } });
    expect(data[9]).toMatchObject({
      index: 2,
      content_block: { type: 'tool_use', id: 'toolu_fake_1', name: 'Read', input: {} },
    });
    expect(JSON.parse(data[10].delta.partial_json)).toEqual({ file_path: '/a' });
    expect(data[12].delta.stop_reason).toBe('tool_use');
    expect(provider.requests[0]).toMatchObject({
      format: 'anthropic',
      path: '/v1/messages?beta=true',
      pathname: '/v1/messages',
    });
  });

  it('answers a message JSON when not streaming', async () => {
    const provider = await start({ respond: [{ text: 'done', stopReason: 'max_tokens' }] });
    const response = await post(`${provider.url}/v1/messages`, { model: 'claude-x' });
    expect(await readJson(response)).toMatchObject({
      type: 'message',
      model: 'claude-x',
      content: [{ type: 'text', text: 'done' }],
      stop_reason: 'max_tokens',
      usage: { output_tokens: 2 },
    });
  });
});

describe('fake provider, routes and failures', () => {
  it('lists models, answers the preconnect and count_tokens without recording them', async () => {
    const provider = await start({ models: ['a', 'b'] });
    const models = await readJson(await fetch(`${provider.openaiBaseUrl}/models`));
    expect(models.object).toBe('list');
    expect(models.data.map((model: { id: string }) => model.id)).toEqual(['a', 'b']);
    expect(models.data[0]).toMatchObject({ object: 'model', owned_by: 'fake', created: 0 });
    expect((await fetch(`${provider.url}/api/hello`, { method: 'HEAD' })).status).toBe(200);
    const count = await post(`${provider.url}/v1/messages/count_tokens`, { messages: [] });
    expect(await readJson(count)).toEqual({ input_tokens: 100 });
    expect(provider.requests).toEqual([]);
    expect(provider.unscripted).toEqual([]);
  });

  it('records unknown routes and model calls past the end of the script', async () => {
    const provider = await start({ respond: [{ text: 'only one' }] });
    const unknown = await fetch(`${provider.url}/v2/nothing?x=1`);
    expect(unknown.status).toBe(404);
    expect((await readJson(unknown)).error.message).toContain('GET /v2/nothing');
    expect((await post(`${provider.url}/v1/messages`, {})).status).toBe(200);
    const exhausted = await post(`${provider.url}/v1/messages`, {});
    expect(exhausted.status).toBe(500);
    expect((await readJson(exhausted)).error.message).toContain('no scripted reply left');
    expect(provider.unscripted.map((request) => request.path)).toEqual([
      '/v2/nothing?x=1',
      '/v1/messages',
    ]);
    expect(provider.requests).toHaveLength(2);
  });

  it('sends error replies with their status, headers and a format-shaped default body', async () => {
    const provider = await start({
      respond: [
        { kind: 'error', status: 429, headers: { 'retry-after': '2' } },
        { kind: 'error', status: 503, body: { custom: true } },
      ],
    });
    const limited = await post(`${provider.url}/v1/messages`, { stream: true });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('2');
    expect(await readJson(limited)).toEqual({
      type: 'error',
      error: { type: 'api_error', message: 'fake error 429' },
    });
    const custom = await post(`${provider.openaiBaseUrl}/chat/completions`, {});
    expect(custom.status).toBe(503);
    expect(await readJson(custom)).toEqual({ custom: true });
  });

  it('resets the connection before any headers', async () => {
    const provider = await start({ respond: [{ kind: 'reset' }] });
    await expect(post(`${provider.url}/v1/messages`, {})).rejects.toThrow();
    expect(provider.requests).toHaveLength(1);
  });

  it('hangs after the headers until the provider is closed', async () => {
    const provider = await start({ respond: [{ kind: 'hang' }] });
    const response = await post(`${provider.url}/v1/messages`, { stream: true });
    expect(response.status).toBe(200);
    const body = response.text();
    const outcome = await Promise.race([
      body.then(() => 'ended'),
      new Promise((resolve) => setTimeout(() => resolve('pending'), scaledMs(100))),
    ]);
    expect(outcome).toBe('pending');
    await provider.close();
    await expect(body).rejects.toThrow();
  });

  it('waits delayMs before the headers and chunkDelayMs between chunks', async () => {
    const provider = await start({
      respond: [{ text: 'abcdef', chunkSize: 2, delayMs: 60, chunkDelayMs: 20 }],
    });
    const startedAt = Date.now();
    const response = await post(`${provider.url}/v1/messages`, { stream: true });
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(55);
    const events = await readSse(response);
    // Each SSE event counts as a chunk.
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(55 + 20 * (events.length - 1) - 5);
  });

  it('records multi-megabyte bodies in full', async () => {
    const provider = await start({ respond: [{ text: 'ok' }] });
    const big = 'x'.repeat(5 * 1024 * 1024);
    const response = await post(`${provider.url}/v1/messages`, { messages: [{ content: big }] });
    expect(response.status).toBe(200);
    expect(provider.requests[0]?.body.messages[0].content).toHaveLength(big.length);
  });
});

describe('fake provider, scripting', () => {
  it('byAssistantTurn picks the step from the assistant messages, ignoring system ones', async () => {
    const provider = await start({
      respond: byAssistantTurn([{ text: 'first' }, { text: 'second' }]),
    });
    const system = { role: 'system', content: 'environment' };
    const turn = (messages: unknown[]) =>
      post(`${provider.url}/v1/messages`, { messages }).then(readJson);
    const second = await turn([
      system,
      { role: 'user', content: 'go' },
      { role: 'assistant', content: 'first' },
      system,
      { role: 'user', content: 'again' },
    ]);
    expect(second.content[0].text).toBe('second');
    const first = await turn([system, { role: 'user', content: 'go' }]);
    expect(first.content[0].text).toBe('first');
    const beyond = await post(`${provider.url}/v1/messages`, {
      messages: [{ role: 'assistant' }, { role: 'assistant' }],
    });
    expect(beyond.status).toBe(500);
    expect(provider.unscripted).toHaveLength(1);
  });

  it('tracks the highest number of model calls answered at once', async () => {
    const provider = await start({ respond: () => ({ text: 'slow', delayMs: 100 }) });
    const call = () =>
      post(`${provider.openaiBaseUrl}/chat/completions`, { stream: true }).then((r) => r.text());
    await call();
    await call();
    expect(provider.maxInFlight).toBe(1);
    await Promise.all([call(), call(), call()]);
    expect(provider.maxInFlight).toBe(3);
    expect(provider.requests).toHaveLength(5);
  });
});
