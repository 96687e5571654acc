import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../../server/src/providers/create-client.ts';
import { ProviderError, textOf, type GenerateRequest } from '../../server/src/wire/spec.ts';
import { startFakeProvider, type FakeProvider } from '../helpers/fake-provider.ts';
import { scaledMs } from '../helpers/timing.ts';

let fake: FakeProvider | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

const request: GenerateRequest = {
  system: 'Be brief.',
  messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
  maxOutputTokens: 100,
};

describe('openai client', () => {
  it('streams text, reasoning and usage, and reports the model that answered', async () => {
    fake = await startFakeProvider({
      respond: [
        {
          text: 'Hi there, this is a longer streamed answer.',
          thinking: 'Let me think.',
          model: 'routed',
          chunkSize: 5,
          usage: { input: 11, output: 7, cachedInput: 3, reasoning: 2 },
        },
      ],
    });
    const client = createClient('openai', {
      baseUrl: fake.openaiBaseUrl,
      model: 'asked',
      apiKey: 'k',
      headers: { 'x-team': 'core' },
    });
    const result = await client.generate(request);
    expect(result.content).toEqual([
      { type: 'thinking', thinking: 'Let me think.', model: 'routed' },
      { type: 'text', text: 'Hi there, this is a longer streamed answer.' },
    ]);
    expect(result.usage).toEqual({
      inputTokens: 11,
      outputTokens: 7,
      cachedInputTokens: 3,
      cacheWriteTokens: 0,
      cacheWrite1hTokens: 0,
      reasoningTokens: 2,
    });
    expect(result.modelAnswered).toBe('routed');
    expect(result.stopReason).toBe('end');
    const sent = fake.requests[0]!;
    expect(sent.headers.authorization).toBe('Bearer k');
    expect(sent.headers['x-team']).toBe('core');
    expect(sent.body).toMatchObject({
      model: 'asked',
      max_tokens: 100,
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello' },
      ],
    });
  });

  it('asks gateways not to retry on their own, and reports their routing headers', async () => {
    fake = await startFakeProvider({
      respond: [
        {
          text: 'ok',
          headers: {
            'x-litellm-model-api-base': 'https://eu.example.test',
            'x-request-id': 'r1',
            // Any case on the wire; read by name.
            'X-OpenRouter-Provider': 'Fireworks',
          },
        },
      ],
    });
    const result = await createClient('openai', {
      baseUrl: fake.openaiBaseUrl,
      model: 'm',
    }).generate(request);
    expect(fake.requests[0]!.headers['x-litellm-num-retries']).toBe('0');
    expect(result.routedVia).toBe(
      'x-litellm-model-api-base: https://eu.example.test; x-openrouter-provider: Fireworks',
    );
  });

  it('maps finish_reason length to max_tokens', async () => {
    fake = await startFakeProvider({ respond: [{ text: 'cut', stopReason: 'length' }] });
    const result = await createClient('openai', {
      baseUrl: fake.openaiBaseUrl,
      model: 'm',
    }).generate(request);
    expect(result.stopReason).toBe('max_tokens');
    expect(result.rawStopReason).toBe('length');
  });

  it('asks again once with max_completion_tokens on the max_tokens 400, and remembers it', async () => {
    const message =
      "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.";
    fake = await startFakeProvider({
      respond: (sent) =>
        sent.body.max_tokens === undefined
          ? { text: 'ok' }
          : { kind: 'error', status: 400, body: { error: { message, param: 'max_tokens' } } },
    });
    const learned = {};
    const client = createClient('openai', { baseUrl: fake.openaiBaseUrl, model: 'm', learned });
    expect(textOf((await client.generate(request)).content)).toBe('ok');
    expect(learned).toEqual({ takesMaxCompletionTokens: true });
    // A new client of the same profile and model (the engine makes one per call) knows it too.
    await createClient('openai', { baseUrl: fake.openaiBaseUrl, model: 'm', learned }).generate(
      request,
    );
    expect(
      fake.requests.map((sent) => Object.keys(sent.body).filter((key) => key.startsWith('max_'))),
    ).toEqual([['max_tokens'], ['max_completion_tokens'], ['max_completion_tokens']]);
  });

  it('aborts a stream that goes silent, after the idle timeout', async () => {
    fake = await startFakeProvider({ respond: () => ({ kind: 'hang' }) });
    const client = createClient('openai', { baseUrl: fake.openaiBaseUrl, model: 'm' });
    const started = Date.now();
    const error = await client
      .generate(request, { idleTimeoutMs: 300, retry: { maxAttempts: 1 } })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).kind).toBe('stalled');
    expect((error as Error).message).toMatch(
      /sent nothing for 300 ms \(the profile's idle limit, "idleTimeoutS"\); the call was aborted/,
    );
    expect(Date.now() - started).toBeLessThan(scaledMs(5_000));
  });

  it('lists served models', async () => {
    fake = await startFakeProvider({ models: ['a', 'b'] });
    expect(
      await createClient('openai', { baseUrl: fake.openaiBaseUrl, model: 'a' }).listModels!(),
    ).toEqual(['a', 'b']);
  });
});

describe('anthropic client', () => {
  it('streams thinking with its signature, text and usage', async () => {
    fake = await startFakeProvider({
      respond: [
        {
          text: 'Answer text',
          thinking: 'Reasoning',
          usage: { input: 20, output: 9, cachedInput: 4 },
        },
      ],
    });
    const client = createClient('anthropic', {
      baseUrl: fake.url,
      model: 'claude-like',
      apiKey: 'ak',
    });
    const result = await client.generate(request);
    expect(result.content).toEqual([
      {
        type: 'thinking',
        thinking: 'Reasoning',
        signature: 'fake-signature',
        model: 'claude-like',
      },
      { type: 'text', text: 'Answer text' },
    ]);
    // Anthropic's input_tokens leaves the cache reads out; the normalised count holds them.
    expect(result.usage).toMatchObject({ inputTokens: 24, outputTokens: 9, cachedInputTokens: 4 });
    expect(result.stopReason).toBe('end');
    const sent = fake.requests[0]!;
    expect(sent.pathname).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe('ak');
    expect(sent.headers.authorization).toBeUndefined();
    // Prompt-caching breakpoints on the system prompt and the latest turn.
    expect(sent.body).toMatchObject({
      model: 'claude-like',
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      max_tokens: 100,
      stream: true,
      messages: [
        {
          role: 'user',
          content: [{ type: 'text', text: 'Hello', cache_control: { type: 'ephemeral' } }],
        },
      ],
    });
    // The caller's request was not touched.
    expect(request.messages[0]!.content[0]).toEqual({ type: 'text', text: 'Hello' });
  });

  it('returns the endpoint own message for an HTTP error', async () => {
    fake = await startFakeProvider({
      respond: [
        {
          kind: 'error',
          status: 400,
          body: {
            type: 'error',
            error: { type: 'invalid_request_error', message: 'max_tokens: too large' },
          },
        },
      ],
    });
    const error = await createClient('anthropic', { baseUrl: fake.url, model: 'm' })
      .generate(request)
      .catch((caught: unknown) => caught);
    expect((error as ProviderError).status).toBe(400);
    expect((error as Error).message).toBe(
      `${fake.url}/v1/messages answered HTTP 400: max_tokens: too large`,
    );
  });
});

describe('an echoed key in a malformed reply', () => {
  it('is cut out before the quoted reply is cut to length: no part of it survives', async () => {
    const key = 'sk-echo-0123456789abcdefghijklmnopqrstuvwxyz';
    // Not JSON; the key straddles where a 200-character quote used to end.
    const body = `{"oops": "${'x'.repeat(170)} ${key} ${'y'.repeat(3_000)}`;
    fake = await startFakeProvider({
      respond: () => ({ kind: 'raw', body, contentType: 'application/json' }),
    });
    const client = createClient('openai', { baseUrl: fake.openaiBaseUrl, model: 'm', apiKey: key });
    const error = await client.generate(request, { retry: { maxAttempts: 1 } }).catch((e) => e);
    expect(error).toBeInstanceOf(ProviderError);
    const message = (error as ProviderError).message;
    expect(message).toContain('malformed JSON');
    expect(message).toContain('[redacted]');
    expect(message).not.toContain(key.slice(0, 10));
    expect(message.length).toBeLessThanOrEqual(1_001);
  });
});
