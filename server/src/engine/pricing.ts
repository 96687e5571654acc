/**
 * What a model call costs, in USD. Prices come from a profile's `price` override, else the
 * offline `@pydantic/genai-prices` table, which is loaded only when a price is first needed.
 */
import type { ModelPrice } from '@pydantic/genai-prices';

/** Long-context pricing: above `inputTokensAbove` input tokens, the whole call uses these rates. */
export interface PriceTier {
  inputTokensAbove: number;
  inputPerMTok: number;
  outputPerMTok: number;
  cachedInputPerMTok?: number;
}

/** USD per million tokens. `tiers` (ascending) come from the table, never from config. */
export interface Price {
  inputPerMTok: number;
  outputPerMTok: number;
  cachedInputPerMTok?: number;
  tiers?: PriceTier[];
}

export interface PricedProfile {
  model: string;
  baseUrl: string;
  local?: boolean;
  price?: Price;
}

export interface TokenCounts {
  /** All input tokens, cached ones included (the OpenAI and genai-prices convention). */
  inputTokens: number;
  /** Output tokens, reasoning included. */
  outputTokens: number;
  cachedInputTokens: number;
}

const FREE: Price = { inputPerMTok: 0, outputPerMTok: 0, cachedInputPerMTok: 0 };
/** Enough to select the price in force without tripping the table's usage consistency checks. */
const PROBE_USAGE = { input_tokens: 1, output_tokens: 1 };

type TablePrice = ModelPrice[string];

/**
 * USD per million tokens for a profile: local → all zero; the profile's `price` override;
 * else the genai-prices table; undefined when unknown. `modelAnswered` (when known) is tried
 * before `profile.model`. `at` selects time-of-day prices (DeepSeek's off-peak discount).
 */
export async function priceFor(
  profile: PricedProfile,
  modelAnswered?: string,
  at: Date = new Date(),
): Promise<Price | undefined> {
  if (profile.local) return FREE;
  if (profile.price) return profile.price;
  // Lazy: the table is ~800 KB of source and most server starts never price anything.
  const { calcPrice, findProvider } = await import('@pydantic/genai-prices');
  // An unrecognised URL is a gateway or proxy: the model name is the best clue left. A
  // recognised provider that does not list the model stays unknown rather than guessed.
  const isKnownUrl = findProvider({ providerApiUrl: profile.baseUrl }) !== undefined;
  const options = isKnownUrl
    ? { providerApiUrl: profile.baseUrl, timestamp: at }
    : { timestamp: at };
  const models = [modelAnswered, profile.model].filter((model): model is string => !!model);
  for (const model of models) {
    const price = tablePrice(() => calcPrice(PROBE_USAGE, model, options));
    if (price) return price;
  }
  return undefined;
}

/** A malformed table entry throws inside the library; treat it as unknown, not as a failed call. */
function tablePrice(lookup: () => { model_price: ModelPrice } | null): Price | undefined {
  try {
    const found = lookup();
    return found ? fromTable(found.model_price) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Cost in USD of one call's usage: cached input tokens at `cachedInputPerMTok` when given,
 * else at the input price; reasoning tokens are already inside the output tokens.
 */
export function costOf(price: Price, usage: TokenCounts): number {
  const rates = ratesFor(price, usage.inputTokens);
  const cached = Math.min(usage.cachedInputTokens, usage.inputTokens);
  const uncached = usage.inputTokens - cached;
  const cachedRate = rates.cachedInputPerMTok ?? rates.inputPerMTok;
  return (
    (uncached * rates.inputPerMTok +
      cached * cachedRate +
      usage.outputTokens * rates.outputPerMTok) /
    1_000_000
  );
}

/** The table's rule: a tier applies once the call's input tokens exceed its start. */
function ratesFor(price: Price, inputTokens: number): Omit<Price, 'tiers'> {
  let rates: Omit<Price, 'tiers'> = price;
  for (const tier of price.tiers ?? []) if (inputTokens > tier.inputTokensAbove) rates = tier;
  return rates;
}

function fromTable(table: ModelPrice): Price | undefined {
  const { input_mtok: input, output_mtok: output, cache_read_mtok: cached } = table;
  // Priced per request, per image or per second only: tokens alone cannot price it.
  if (input === undefined && output === undefined) return undefined;
  const at = (tokens: number) => ({
    inputPerMTok: rateAt(input, tokens),
    outputPerMTok: rateAt(output, tokens),
    ...(cached === undefined ? {} : { cachedInputPerMTok: rateAt(cached, tokens) }),
  });
  const starts = [...new Set([input, output, cached].flatMap(tierStarts))].sort((a, b) => a - b);
  const tiers = starts.map((start) => ({ inputTokensAbove: start, ...at(start + 1) }));
  return { ...at(0), ...(tiers.length ? { tiers } : {}) };
}

function rateAt(value: TablePrice, inputTokens: number): number {
  if (value === undefined) return 0;
  if (typeof value === 'number') return value;
  let rate = value.base;
  for (const tier of value.tiers) if (inputTokens > tier.start) rate = tier.price;
  return rate;
}

function tierStarts(value: TablePrice): number[] {
  return typeof value === 'object' ? value.tiers.map((tier) => tier.start) : [];
}
