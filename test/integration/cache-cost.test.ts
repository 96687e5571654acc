import { describe, expect } from 'vitest';
import { callModel } from '../../server/src/calls/call-model.ts';
import { readLedger } from '../../server/src/calls/ledger.ts';
import type { GenerateRequest } from '../../server/src/wire/spec.ts';
import { appContext, FAST_CALLS } from '../helpers/app-context.ts';
import type { FakeUsage } from '../helpers/fake-provider.ts';
import { taskTest } from '../helpers/task-world.ts';
import type { TempEnv } from '../helpers/temp-env.ts';

/** $3 in / $15 out per million tokens, cache reads $0.30 (writes default to 1.25 × input). */
const PRICE = { inputPerMTok: 3, outputPerMTok: 15, cachedInputPerMTok: 0.3 };
const REQUEST: GenerateRequest = {
  messages: [{ role: 'user', content: [{ type: 'text', text: 'summarise' }] }],
  maxOutputTokens: 100,
};

const it = taskTest.extend(
  'worker',
  ({ world, provider }) =>
    async (format: 'anthropic' | 'openai', usage: FakeUsage, price: object = PRICE) => {
      const fake = await provider.start({ respond: () => ({ text: 'ok', usage }) });
      const baseUrl = format === 'anthropic' ? fake.url : fake.openaiBaseUrl;
      world.writeConfig({ profiles: { w: { format, baseUrl, model: 'claude-like', price } } });
    },
);
it.override('repository', null);

const call = (world: TempEnv) =>
  callModel({ request: REQUEST, bytesSent: 0, callOptions: FAST_CALLS }, appContext(world));

describe('cache-aware cost over real SSE', () => {
  it('Anthropic: 1,000 input + 10,000 cache-write + 100,000 cache-read + 100 output tokens cost $0.072, in delegate and usage', async ({
    worker,
    world,
    server: servers,
  }) => {
    await worker('anthropic', {
      input: 1_000,
      cacheWrite: 10_000,
      cachedInput: 100_000,
      output: 100,
    });
    const server = await servers.start(world.env);
    const answer = await server.callText('delegate', { task: 'summarise' });
    expect(answer.text).toContain(
      '111,000 in (100,000 cached, 10,000 written to cache) / 100 out tokens',
    );
    expect(answer.text).toMatch(/\$0\.072(?!\d)/);
    const usage = await server.callText('usage', { period: 'today' });
    expect(usage.text).toMatch(
      /^Today \(\d{4}-\d{2}-\d{2} UTC\): 1 call · \$0\.072 · 111,000 in \(100,000 cached, 10,000 written to cache\) \/ 100 out tokens/,
    );
    expect(readLedger(world.dataHome)).toEqual([
      expect.objectContaining({
        inputTokens: 111_000,
        cachedInputTokens: 100_000,
        cacheWriteTokens: 10_000,
        outputTokens: 100,
        costUsd: expect.closeTo(0.072, 12) as number,
      }),
    ]);
  });

  it('Anthropic: a cache miss bills every input token at the input price; 1-hour writes at 2 × input', async ({
    worker,
    world,
    provider,
  }) => {
    await worker('anthropic', { input: 111_000, output: 100 });
    expect((await call(world)).costUsd).toBeCloseTo((111_000 * 3 + 100 * 15) / 1e6, 12);
    await provider.started!.close();
    await worker('anthropic', {
      input: 1_000,
      cacheWrite: 10_000,
      cacheWrite1h: 4_000,
      output: 100,
    });
    const served = await call(world);
    expect(served.result.usage).toMatchObject({
      inputTokens: 11_000,
      cacheWriteTokens: 10_000,
      cacheWrite1hTokens: 4_000,
    });
    const expected = (1_000 * 3 + 6_000 * 3.75 + 4_000 * 6 + 100 * 15) / 1e6;
    expect(served.costUsd).toBeCloseTo(expected, 12);
  });

  it('OpenAI: prompt_tokens include the cached ones, which bill at the cached rate', async ({
    worker,
    world,
    provider,
  }) => {
    // A hit: 100,000 of the 111,000 prompt tokens came from the cache, 10,000 were written to it.
    const price = { ...PRICE, cacheWritePerMTok: 3.75 };
    await worker(
      'openai',
      { input: 111_000, cachedInput: 100_000, cacheWrite: 10_000, output: 100 },
      price,
    );
    const hit = await call(world);
    expect(hit.result.usage).toMatchObject({
      inputTokens: 111_000,
      cachedInputTokens: 100_000,
      cacheWriteTokens: 10_000,
    });
    expect(hit.costUsd).toBeCloseTo(0.072, 12);
    await provider.started!.close();
    await worker('openai', { input: 111_000, output: 100 }, price);
    expect((await call(world)).costUsd).toBeCloseTo((111_000 * 3 + 100 * 15) / 1e6, 12);
    // Without cacheWritePerMTok, an OpenAI-format profile's writes cost the input price.
    await provider.started!.close();
    await worker('openai', {
      input: 111_000,
      cachedInput: 100_000,
      cacheWrite: 10_000,
      output: 100,
    });
    expect((await call(world)).costUsd).toBeCloseTo(
      (11_000 * 3 + 100_000 * 0.3 + 100 * 15) / 1e6,
      12,
    );
  });
});
