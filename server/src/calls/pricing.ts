/**
 * What a model call costs, in USD. Prices come from a profile's `price` override, else the
 * offline `@pydantic/genai-prices` table, which is loaded only when a price is first needed.
 * Cache reads and writes have rates of their own (see {@link priceFor} for the defaults).
 */
import type * as PricesModule from '@pydantic/genai-prices';
import type { ModelPrice, Provider } from '@pydantic/genai-prices';

/** USD per million tokens of each kind. */
export interface Rates {
  inputPerMTok: number;
  outputPerMTok: number;
  /** Cache reads; the input price when absent. */
  cachedInputPerMTok?: number;
  /** Cache writes (Anthropic's 5-minute cache); the input price when absent. */
  cacheWritePerMTok?: number;
  /** Writes to Anthropic's 1-hour cache; the cache-write price when absent. */
  cacheWrite1hPerMTok?: number;
}

/** Long-context pricing: above `inputTokensAbove` input tokens, the whole call uses these rates. */
export interface PriceTier extends Rates {
  inputTokensAbove: number;
}

/** USD per million tokens. `tiers` (ascending) come from the table, never from config. */
export interface Price extends Rates {
  tiers?: PriceTier[];
}

export interface PricedProfile {
  model: string;
  baseUrl: string;
  /** The wire format, which decides the default cache rates (Anthropic's differ). */
  format?: string;
  local?: boolean;
  price?: Price;
}

/** A call's tokens in the {@link Usage} convention (cache reads and writes are parts of the input). */
export interface TokenCounts {
  /** All input tokens, cached and cache-written ones included (the genai-prices convention). */
  inputTokens: number;
  /** Output tokens, reasoning included. */
  outputTokens: number;
  cachedInputTokens: number;
  cacheWriteTokens?: number;
  /** The part of `cacheWriteTokens` written to the 1-hour cache. */
  cacheWrite1hTokens?: number;
}

const FREE: Price = {
  inputPerMTok: 0,
  outputPerMTok: 0,
  cachedInputPerMTok: 0,
  cacheWritePerMTok: 0,
  cacheWrite1hPerMTok: 0,
};
/** Anthropic's multipliers of the input price: cache reads, 5-minute and 1-hour cache writes. */
const ANTHROPIC_CACHE = { read: 0.1, write: 1.25, write1h: 2 };
/** Enough to select the price in force without tripping the table's usage consistency checks. */
const PROBE_USAGE = { input_tokens: 1, output_tokens: 1 };

type TablePrice = ModelPrice[string];

/**
 * USD per million tokens for a profile, every cache rate filled in: local → all zero; the
 * profile's `price` override; else the genai-prices table; undefined when unknown.
 * `modelAnswered` (when known) is tried before `profile.model`. `at` selects time-of-day
 * prices (DeepSeek's off-peak discount).
 *
 * Cache reads: `cachedInputPerMTok`, else the table's rate (never above an override's input
 * price), else 0.1 × input for the Anthropic format and the input price elsewhere. Cache
 * writes: `cacheWritePerMTok` (then for both caches), else the table's rates, else 1.25 × input
 * (5-minute cache) and 2 × input (1-hour cache) for the Anthropic format and the input price
 * elsewhere.
 */
export async function priceFor(
  profile: PricedProfile,
  modelAnswered?: string,
  at: Date = new Date(),
): Promise<Price | undefined> {
  if (profile.local) return FREE;
  const override = profile.price;
  const table =
    override?.cachedInputPerMTok === undefined
      ? await tablePriceFor(profile, modelAnswered, at)
      : undefined;
  if (!override) return table && withCacheDefaults(table, profile.format);
  const tableRead = table?.cachedInputPerMTok;
  const cachedInputPerMTok =
    override.cachedInputPerMTok ??
    (tableRead === undefined ? undefined : Math.min(tableRead, override.inputPerMTok));
  const cacheWrite1hPerMTok = override.cacheWrite1hPerMTok ?? override.cacheWritePerMTok;
  return withCacheDefaults(
    {
      ...override,
      ...(cachedInputPerMTok === undefined ? {} : { cachedInputPerMTok }),
      ...(cacheWrite1hPerMTok === undefined ? {} : { cacheWrite1hPerMTok }),
    },
    profile.format,
  );
}

/** The table's price for the profile's model (or the model that answered), if it has one. */
async function tablePriceFor(
  profile: PricedProfile,
  modelAnswered: string | undefined,
  at: Date,
): Promise<Price | undefined> {
  // Lazy: most server starts never price anything.
  const prices = await import('@pydantic/genai-prices');
  const models = [modelAnswered, profile.model].filter((model): model is string => !!model);
  for (const model of models) {
    const provider = matchedProvider(prices, profile.baseUrl, model);
    const price =
      provider &&
      tablePrice(() => prices.calcPrice(PROBE_USAGE, model, { provider, timestamp: at }));
    if (price) return price;
  }
  return undefined;
}

type PricesLibrary = typeof PricesModule;

/**
 * What the table matched per endpoint and model: its provider with that one model entry (time-of-day
 * and dated prices included), or null. The rest of the table is not kept (see `withTable`).
 */
const matches = new Map<string, Provider | null>();

function matchedProvider(prices: PricesLibrary, baseUrl: string, model: string): Provider | null {
  const key = `${baseUrl}\u0000${model}`;
  let match = matches.get(key);
  if (match === undefined) {
    match = withTable(prices, () => {
      // An unrecognised URL is a gateway or proxy: the model name is the best clue left. A
      // recognised provider that does not list the model stays unknown rather than guessed.
      const isKnownUrl = prices.findProvider({ providerApiUrl: baseUrl }) !== undefined;
      const found = tableLookup(() =>
        prices.calcPrice(PROBE_USAGE, model, isKnownUrl ? { providerApiUrl: baseUrl } : {}),
      );
      return found ? { ...found.provider, models: [found.model] } : null;
    });
    matches.set(key, match);
  }
  return match;
}

/** How long a loaded table stays for the next lookup (a server pricing every profile at once). */
const TABLE_KEPT_MS = 200;
let dropTable: NodeJS.Timeout | undefined;

/**
 * Runs `lookup` with the whole table in force. The bundles are built without it in the module
 * (scripts/build.mjs): it is read then, and dropped again once lookups stop, so a task worker
 * waiting on its model holds the entry it matched, not the table.
 */
function withTable<T>(prices: PricesLibrary, lookup: () => T): T {
  const readTable = (prices as { bundledPriceTable?: () => unknown }).bundledPriceTable;
  if (!readTable) return lookup();
  if (!dropTable) {
    let table: Provider[];
    try {
      table = readTable() as Provider[];
    } catch (error) {
      throw new Error(
        `The price table beside delegate's bundles (genai-prices.json) cannot be read: ${(error as Error).message}. ` +
          'Reinstall the plugin, or set "price" in the profile.',
        { cause: error },
      );
    }
    prices.updatePrices(({ setProviderData }) => setProviderData(table));
  }
  clearTimeout(dropTable);
  dropTable = setTimeout(() => {
    dropTable = undefined;
    prices.updatePrices(({ setProviderData }) => setProviderData([]));
  }, TABLE_KEPT_MS);
  dropTable.unref();
  return lookup();
}

/** A lookup of the library that throws on a malformed table entry: unknown, not a failed call. */
function tableLookup<T>(lookup: () => T): T | null {
  try {
    return lookup();
  } catch {
    return null;
  }
}

/** The price a lookup found, in this module's units; unknown when its entry is malformed. */
function tablePrice(lookup: () => { model_price: ModelPrice } | null): Price | undefined {
  const found = tableLookup(lookup);
  return found ? fromTable(found.model_price) : undefined;
}

/** Missing cache rates (base and tiers) set to the format's defaults; see {@link priceFor}. */
function withCacheDefaults(price: Price, format: string | undefined): Price {
  const isAnthropic = format === 'anthropic';
  const fill = <T extends Rates>(rates: T): T => {
    const input = rates.inputPerMTok;
    const write = rates.cacheWritePerMTok ?? (isAnthropic ? ANTHROPIC_CACHE.write * input : input);
    return {
      ...rates,
      cachedInputPerMTok:
        rates.cachedInputPerMTok ?? (isAnthropic ? ANTHROPIC_CACHE.read * input : input),
      cacheWritePerMTok: write,
      cacheWrite1hPerMTok:
        rates.cacheWrite1hPerMTok ?? (isAnthropic ? ANTHROPIC_CACHE.write1h * input : write),
    };
  };
  const filled = fill(price);
  return price.tiers ? { ...filled, tiers: price.tiers.map(fill) } : filled;
}

/**
 * Cost in USD of one call's usage: uncached input at the input price, cache reads at
 * `cachedInputPerMTok`, cache writes at `cacheWritePerMTok` (1-hour ones at
 * `cacheWrite1hPerMTok`), each falling back as {@link Rates} says; reasoning tokens are
 * already inside the output tokens.
 */
export function costOf(price: Price, usage: TokenCounts): number {
  const rates = ratesFor(price, usage.inputTokens);
  const read = Math.min(usage.cachedInputTokens, usage.inputTokens);
  const written = Math.min(usage.cacheWriteTokens ?? 0, usage.inputTokens - read);
  const written1h = Math.min(usage.cacheWrite1hTokens ?? 0, written);
  const uncached = usage.inputTokens - read - written;
  const readRate = rates.cachedInputPerMTok ?? rates.inputPerMTok;
  const writeRate = rates.cacheWritePerMTok ?? rates.inputPerMTok;
  const write1hRate = rates.cacheWrite1hPerMTok ?? writeRate;
  return (
    (uncached * rates.inputPerMTok +
      read * readRate +
      (written - written1h) * writeRate +
      written1h * write1hRate +
      usage.outputTokens * rates.outputPerMTok) /
    1_000_000
  );
}

/** The table's rule: a tier applies once the call's input tokens exceed its start. */
export function ratesFor(price: Price, inputTokens: number): Rates {
  let rates: Rates = price;
  for (const tier of price.tiers ?? []) if (inputTokens > tier.inputTokensAbove) rates = tier;
  return rates;
}

const TABLE_KEYS = {
  inputPerMTok: 'input_mtok',
  outputPerMTok: 'output_mtok',
  cachedInputPerMTok: 'cache_read_mtok',
  cacheWritePerMTok: 'cache_write_mtok',
  cacheWrite1hPerMTok: 'cache_write_1h_mtok',
} as const;

function fromTable(table: ModelPrice): Price | undefined {
  const { input_mtok: input, output_mtok: output } = table;
  // Priced per request, per image or per second only: tokens alone cannot price it.
  if (input === undefined && output === undefined) return undefined;
  const entries = Object.entries(TABLE_KEYS).map(([field, key]) => [field, table[key]] as const);
  const at = (tokens: number) => {
    const rates: Record<string, number> = {};
    for (const [field, value] of entries) {
      const isOptional = field !== 'inputPerMTok' && field !== 'outputPerMTok';
      if (!isOptional || value !== undefined) rates[field] = rateAt(value, tokens);
    }
    return rates as unknown as Rates;
  };
  const values = entries.map(([, value]) => value);
  const starts = [...new Set(values.flatMap(tierStarts))].sort((a, b) => a - b);
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
