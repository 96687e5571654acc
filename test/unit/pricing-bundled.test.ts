import { mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a build script, plain JavaScript
import { pricesWithoutTable, writePriceTable } from '../../scripts/price-table.mjs';
import { priceFor, type PricedProfile } from '../../server/src/calls/pricing.ts';

const root = join(import.meta.dirname, '..', '..');
let dir: string;
let bundled: { priceFor: typeof priceFor };

/** pricing.ts as the bundles have it: the library without its table, the table beside it as JSON. */
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'delegate-pricing-bundled-'));
  await build({
    entryPoints: [join(root, 'server', 'src', 'calls', 'pricing.ts')],
    outfile: join(dir, 'pricing.mjs'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    plugins: [pricesWithoutTable],
    logLevel: 'silent',
  });
  await writePriceTable(root, dir);
  bundled = (await import(pathToFileURL(join(dir, 'pricing.mjs')).href)) as typeof bundled;
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const DEEPSEEK = 'https://api.deepseek.com/v1';
const OPENAI = 'https://api.openai.com/v1';
const ANTHROPIC = 'https://api.anthropic.com';
const GATEWAY = 'http://127.0.0.1:4000/v1';
const PEAK = new Date('2026-11-30T12:00:00Z');
const OFF_PEAK = new Date('2026-11-30T20:00:00Z');

// Every way a lookup goes: by URL, by model behind a gateway, the model that answered first,
// a time-of-day price either side of its boundary, long-context tiers, a model or a provider
// the table does not list.
const cases: Array<[name: string, profile: PricedProfile, answered?: string, at?: Date]> = [
  ['by URL, at peak', { model: 'deepseek-chat', baseUrl: DEEPSEEK }, undefined, PEAK],
  ['by URL, off-peak', { model: 'deepseek-chat', baseUrl: DEEPSEEK }, undefined, OFF_PEAK],
  ['by URL again, at peak', { model: 'deepseek-chat', baseUrl: DEEPSEEK }, undefined, PEAK],
  ['with tiers', { model: 'claude-sonnet-4-5', baseUrl: ANTHROPIC, format: 'anthropic' }],
  [
    'the model that answered',
    { model: 'not-a-real-model', baseUrl: OPENAI },
    'gpt-4o-mini-2024-07-18',
  ],
  ['behind a gateway', { model: 'gpt-4o-mini', baseUrl: GATEWAY }],
  ['a model the table lacks', { model: 'qwen3-coder:30b', baseUrl: GATEWAY }],
  ['a provider that lacks the model', { model: 'gpt-4o-mini', baseUrl: ANTHROPIC }],
];

describe('prices in the bundles: the table out of the library module, read for lookups only', () => {
  it.each(cases)(
    '%s: the same price as the library with its table',
    async (_name, profile, answered, at) => {
      expect(await bundled.priceFor(profile, answered, at)).toEqual(
        await priceFor(profile, answered, at),
      );
    },
  );

  it('still prices after the table was let go, a match it kept and a new one', async () => {
    await bundled.priceFor({ model: 'gpt-4o-mini', baseUrl: OPENAI });
    // The table is let go a moment (200 ms) after the last lookup.
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (const profile of [
      { model: 'gpt-4o-mini', baseUrl: OPENAI },
      { model: 'deepseek-reasoner', baseUrl: DEEPSEEK },
    ]) {
      const price = await bundled.priceFor(profile, undefined, PEAK);
      expect(price?.inputPerMTok).toBeGreaterThan(0);
      expect(price).toEqual(await priceFor(profile, undefined, PEAK));
    }
  });

  it('says what to do when the table beside the bundle is missing', async () => {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const table = join(dir, 'genai-prices.json');
    renameSync(table, `${table}.away`);
    try {
      await expect(bundled.priceFor({ model: 'gpt-4.1', baseUrl: OPENAI })).rejects.toThrow(
        /genai-prices\.json\) cannot be read: .*Reinstall the plugin/,
      );
    } finally {
      renameSync(`${table}.away`, table);
    }
  });
});
