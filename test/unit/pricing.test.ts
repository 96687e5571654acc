import { calcPrice } from '@pydantic/genai-prices';
import { describe, expect, it } from 'vitest';
import { costOf, priceFor, type Price } from '../../server/src/engine/pricing.ts';

const DEEPSEEK = 'https://api.deepseek.com/v1';
const OPENAI = 'https://api.openai.com/v1';
const ANTHROPIC = 'https://api.anthropic.com';
const OLLAMA = 'http://127.0.0.1:11434/v1';
/** DeepSeek's table has off-peak prices (16:30–00:30 UTC): pin the clock. */
const PEAK = new Date('2026-11-30T12:00:00Z');
const OFF_PEAK = new Date('2026-11-30T20:00:00Z');

describe('priceFor', () => {
  it('prices known models from the table, matched by base URL', async () => {
    expect(await priceFor({ model: 'deepseek-chat', baseUrl: DEEPSEEK }, undefined, PEAK)).toEqual({
      inputPerMTok: 0.27,
      outputPerMTok: 1.1,
      cachedInputPerMTok: 0.07,
    });
    expect(await priceFor({ model: 'gpt-4o-mini', baseUrl: OPENAI })).toEqual({
      inputPerMTok: 0.15,
      outputPerMTok: 0.6,
      cachedInputPerMTok: 0.075,
    });
    expect(await priceFor({ model: 'claude-sonnet-4-5', baseUrl: ANTHROPIC })).toEqual({
      inputPerMTok: 3,
      outputPerMTok: 15,
      cachedInputPerMTok: 0.3,
      tiers: [
        {
          inputTokensAbove: 200_000,
          inputPerMTok: 6,
          outputPerMTok: 22.5,
          cachedInputPerMTok: 0.6,
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
    expect(offPeak).toEqual({
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
    const zero = { inputPerMTok: 0, outputPerMTok: 0, cachedInputPerMTok: 0 };
    expect(await priceFor({ model: 'gpt-4o-mini', baseUrl: OPENAI, local: true })).toEqual(zero);
    const price = { inputPerMTok: 0.6, outputPerMTok: 2.2 };
    expect(await priceFor({ model: 'gpt-4o-mini', baseUrl: OPENAI, price })).toEqual(price);
    expect(await priceFor({ model: 'qwen3-coder:30b', baseUrl: OLLAMA, price })).toEqual(price);
  });
});

describe('costOf', () => {
  const simple: Price = { inputPerMTok: 1, outputPerMTok: 2 };

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
      const usage = { inputTokens: input, outputTokens: output, cachedInputTokens: cached };
      const table = calcPrice(
        { input_tokens: input, cache_read_tokens: cached, output_tokens: output },
        model,
        { providerApiUrl: baseUrl },
      );
      expect(costOf(price!, usage)).toBeCloseTo(table!.total_price, 12);
    }
  });
});
