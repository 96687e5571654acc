import { calcPrice } from '@pydantic/genai-prices';
import { describe, expect, it } from 'vitest';
import { costOf, priceFor, type Price } from '../../server/src/calls/pricing.ts';

const DEEPSEEK = 'https://api.deepseek.com/v1';
const OPENAI = 'https://api.openai.com/v1';
const ANTHROPIC = 'https://api.anthropic.com';
const OLLAMA = 'http://127.0.0.1:11434/v1';
/** DeepSeek's table has off-peak prices (16:30–00:30 UTC): pin the clock. */
const PEAK = new Date('2026-11-30T12:00:00Z');
const OFF_PEAK = new Date('2026-11-30T20:00:00Z');

describe('priceFor', () => {
  it('prices known models from the table, matched by base URL', async () => {
    // No cache-write price in the table: writes cost the input price.
    expect(await priceFor({ model: 'deepseek-chat', baseUrl: DEEPSEEK }, undefined, PEAK)).toEqual({
      inputPerMTok: 0.27,
      outputPerMTok: 1.1,
      cachedInputPerMTok: 0.07,
      cacheWritePerMTok: 0.27,
      cacheWrite1hPerMTok: 0.27,
    });
    expect(await priceFor({ model: 'gpt-4o-mini', baseUrl: OPENAI })).toEqual({
      inputPerMTok: 0.15,
      outputPerMTok: 0.6,
      cachedInputPerMTok: 0.075,
      cacheWritePerMTok: 0.15,
      cacheWrite1hPerMTok: 0.15,
    });
    const claude = { model: 'claude-sonnet-4-5', baseUrl: ANTHROPIC, format: 'anthropic' };
    expect(await priceFor(claude)).toEqual({
      inputPerMTok: 3,
      outputPerMTok: 15,
      cachedInputPerMTok: 0.3,
      cacheWritePerMTok: 3.75,
      cacheWrite1hPerMTok: 6,
      tiers: [
        {
          inputTokensAbove: 200_000,
          inputPerMTok: 6,
          outputPerMTok: 22.5,
          cachedInputPerMTok: 0.6,
          cacheWritePerMTok: 7.5,
          cacheWrite1hPerMTok: 12,
        },
      ],
    });
  });

  it('uses the price in force at the given time', async () => {
    const offPeak = await priceFor(
      { model: 'deepseek-chat', baseUrl: DEEPSEEK },
      undefined,
      OFF_PEAK,
    );
    expect(offPeak).toMatchObject({
      inputPerMTok: 0.135,
      outputPerMTok: 0.55,
      cachedInputPerMTok: 0.035,
    });
  });

  it('tries the model that answered before the one asked for', async () => {
    const profile = { model: 'not-a-real-model', baseUrl: OPENAI };
    expect((await priceFor(profile, 'gpt-4o-mini-2024-07-18'))?.inputPerMTok).toBe(0.15);
    const asked = { model: 'gpt-4o-mini', baseUrl: OPENAI };
    expect((await priceFor(asked, 'gpt-4o-mini-routed-somewhere'))?.inputPerMTok).toBe(0.15);
  });

  it('returns undefined for models the table does not know', async () => {
    expect(await priceFor({ model: 'qwen3-coder:30b', baseUrl: OLLAMA })).toBeUndefined();
    // A known provider that does not list the model: no guessing from other providers.
    expect(await priceFor({ model: 'gpt-4o-mini', baseUrl: ANTHROPIC })).toBeUndefined();
  });

  it('falls back to the model name behind an unrecognised gateway URL', async () => {
    const gateway = { model: 'gpt-4o-mini', baseUrl: 'http://127.0.0.1:4000/v1' };
    expect((await priceFor(gateway))?.outputPerMTok).toBe(0.6);
  });

  it('prices local profiles at zero and prefers a profile override to the table', async () => {
    const local = await priceFor({ model: 'gpt-4o-mini', baseUrl: OPENAI, local: true });
    expect(Object.values(local!).every((rate) => rate === 0)).toBe(true);
    const price = { inputPerMTok: 0.6, outputPerMTok: 2.2 };
    // Cache reads the override leaves out come from the table, never above its input price.
    expect(await priceFor({ model: 'gpt-4o-mini', baseUrl: OPENAI, price })).toEqual({
      ...price,
      cachedInputPerMTok: 0.075,
      cacheWritePerMTok: 0.6,
      cacheWrite1hPerMTok: 0.6,
    });
    const free = { inputPerMTok: 0, outputPerMTok: 0 };
    expect(await priceFor({ model: 'gpt-4o-mini', baseUrl: OPENAI, price: free })).toMatchObject({
      cachedInputPerMTok: 0,
    });
    expect(await priceFor({ model: 'qwen3-coder:30b', baseUrl: OLLAMA, price })).toEqual({
      ...price,
      cachedInputPerMTok: 0.6,
      cacheWritePerMTok: 0.6,
      cacheWrite1hPerMTok: 0.6,
    });
  });

  it('defaults cache rates by format: Anthropic reads 0.1x, writes 1.25x (1-hour cache 2x) input', async () => {
    const gateway = 'http://127.0.0.1:4000';
    const price = { inputPerMTok: 0.6, outputPerMTok: 2.2 };
    const model = 'glm-coding-plan';
    expect(await priceFor({ model, baseUrl: gateway, format: 'anthropic', price })).toEqual({
      ...price,
      cachedInputPerMTok: 0.06,
      cacheWritePerMTok: 0.75,
      cacheWrite1hPerMTok: 1.2,
    });
    const set = { ...price, cachedInputPerMTok: 0.1, cacheWritePerMTok: 0.6 };
    expect(await priceFor({ model, baseUrl: gateway, format: 'anthropic', price: set })).toEqual({
      ...set,
      cacheWrite1hPerMTok: 0.6,
    });
  });
});

describe('costOf', () => {
  const simple: Price = { inputPerMTok: 1, outputPerMTok: 2 };

  it('bills cache writes and reads on top of uncached input: the audit example comes to $0.0720', async () => {
    // 1,000 uncached + 10,000 written + 100,000 read input tokens, 100 output, at $3/$15.
    const usage = {
      inputTokens: 111_000,
      cachedInputTokens: 100_000,
      cacheWriteTokens: 10_000,
      outputTokens: 100,
    };
    const override = { inputPerMTok: 3, outputPerMTok: 15, cachedInputPerMTok: 0.3 };
    const profile = { model: 'claude-like', baseUrl: 'http://127.0.0.1:4000', format: 'anthropic' };
    expect(costOf((await priceFor({ ...profile, price: override }))!, usage)).toBeCloseTo(
      0.072,
      12,
    );
    const table = await priceFor({ model: 'claude-sonnet-4-5', baseUrl: ANTHROPIC });
    expect(costOf(table!, usage)).toBeCloseTo(0.072, 12);
    // Half of the writes to the 1-hour cache: 5,000 tokens at $6 instead of $3.75.
    const oneHour = costOf(table!, { ...usage, cacheWrite1hTokens: 5_000 });
    expect(oneHour).toBeCloseTo(0.072 + (5_000 * (6 - 3.75)) / 1e6, 12);
  });

  it('bills input and output per million tokens', () => {
    expect(costOf(simple, { inputTokens: 1000, outputTokens: 500, cachedInputTokens: 0 })).toBe(
      0.002,
    );
  });

  it('bills cached input at the cached price, else at the input price', () => {
    const usage = { inputTokens: 1000, outputTokens: 0, cachedInputTokens: 400 };
    expect(costOf({ ...simple, cachedInputPerMTok: 0.1 }, usage)).toBeCloseTo(0.00064, 12);
    expect(costOf(simple, usage)).toBeCloseTo(0.001, 12);
  });

  it('agrees with genai-prices, long-context tiers included', async () => {
    const cases = [
      { model: 'gpt-4o-mini', baseUrl: OPENAI, input: 12_345, cached: 2_000, output: 678 },
      { model: 'claude-sonnet-4-5', baseUrl: ANTHROPIC, input: 150_000, cached: 0, output: 4_000 },
      {
        model: 'claude-sonnet-4-5',
        baseUrl: ANTHROPIC,
        input: 250_000,
        cached: 50_000,
        output: 4_000,
      },
    ];
    for (const { model, baseUrl, input, cached, output } of cases) {
      const price = await priceFor({ model, baseUrl });
      const written = Math.floor(input / 10);
      const usage = {
        inputTokens: input,
        outputTokens: output,
        cachedInputTokens: cached,
        cacheWriteTokens: written,
      };
      const table = calcPrice(
        {
          input_tokens: input,
          cache_read_tokens: cached,
          cache_write_tokens: written,
          output_tokens: output,
        },
        model,
        { providerApiUrl: baseUrl },
      );
      expect(costOf(price!, usage)).toBeCloseTo(table!.total_price, 12);
    }
  });
});
