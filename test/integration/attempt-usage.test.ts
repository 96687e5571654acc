import { describe, expect } from 'vitest';
import { callModel } from '../../server/src/calls/call-model.ts';
import { readLedger } from '../../server/src/calls/ledger.ts';
import { usageReport } from '../../server/src/calls/usage-report.ts';
import { loadConfig } from '../../server/src/profiles/load-config.ts';
import type { GenerateRequest } from '../../server/src/wire/spec.ts';
import { appContext, FAST_CALLS } from '../helpers/app-context.ts';
import type { FakeReply } from '../helpers/fake-provider.ts';
import { taskTest } from '../helpers/task-world.ts';
import type { TempEnv } from '../helpers/temp-env.ts';

const REQUEST: GenerateRequest = {
  messages: [{ role: 'user', content: [{ type: 'text', text: 'read a.txt' }] }],
  maxOutputTokens: 1_000,
};
const PRICE = { inputPerMTok: 1, outputPerMTok: 2 };
/** message_start (with its usage), ping, the tool block's start, one piece of its JSON: then cut. */
const CUT_MID_TOOL_JSON: FakeReply = {
  toolUses: [{ name: 'read_file', input: { path: 'a.txt', offset: 0, limit: 200 } }],
  chunkSize: 8,
  usage: { input: 5_000, cachedInput: 1_000, output: 40 },
  cutAfterEvents: 4,
};

const it = taskTest.extend(
  'worker',
  ({ world, provider }) =>
    async (replies: FakeReply[], budget?: object) => {
      const fake = await provider.start({ respond: replies });
      world.writeConfig({
        ...(budget ? { budget } : {}),
        profiles: { w: { format: 'anthropic', baseUrl: fake.url, model: 'm', price: PRICE } },
      });
    },
);
it.override('repository', null);

const call = (world: TempEnv) =>
  callModel({ request: REQUEST, bytesSent: 0, callOptions: FAST_CALLS }, appContext(world));

describe('every attempt that reported usage is in the ledger', () => {
  it('a stream cut mid tool-call JSON, retried: each cut attempt is billed and recorded', async ({
    worker,
    world,
  }) => {
    await worker([
      CUT_MID_TOOL_JSON,
      CUT_MID_TOOL_JSON,
      { text: 'done', usage: { input: 5_000, output: 3 } },
    ]);
    const served = await call(world);
    expect(served.result.attempts).toBe(3);
    const ledger = readLedger(world.dataHome);
    expect(ledger.map((record) => [record.outcome, record.attempts])).toEqual([
      ['error', 1],
      ['error', 2],
      ['ok', 3],
    ]);
    // Anthropic's message_start usage: 5,000 uncached + 1,000 read; 1 output token so far.
    const cut = { inputTokens: 6_000, cachedInputTokens: 1_000, outputTokens: 1 };
    expect(ledger[0]).toMatchObject({
      ...cut,
      error: expect.stringMatching(/broke off/) as string,
    });
    expect(ledger[1]).toMatchObject(cut);
    const perCut = (5_000 * 1 + 1_000 * 0.1 + 1 * 2) / 1e6;
    expect(ledger[0]!.costUsd).toBeCloseTo(perCut, 12);
    expect(new Set(ledger.map((record) => record.callId)).size).toBe(1);
    expect(served.costUsd).toBeCloseTo(2 * perCut + (5_000 + 3 * 2) / 1e6, 12);
    const config = loadConfig(world.dataHome, world.project, {});
    expect(usageReport(world.dataHome, config, 'today', new Date())).toMatch(
      /: 1 call \(2 retried attempts\) · \$0\.0152 · 17,000 in/,
    );
  });

  it('a call whose four attempts are all cut fails with all four in the ledger', async ({
    worker,
    world,
  }) => {
    await worker([CUT_MID_TOOL_JSON, CUT_MID_TOOL_JSON, CUT_MID_TOOL_JSON, CUT_MID_TOOL_JSON]);
    const spent: number[] = [];
    await expect(
      callModel(
        {
          request: REQUEST,
          bytesSent: 0,
          callOptions: FAST_CALLS,
          onSpend: (usd) => spent.push(usd),
        },
        appContext(world),
      ),
    ).rejects.toThrow(/broke off.*after 4 attempts/);
    const ledger = readLedger(world.dataHome);
    expect(ledger).toHaveLength(4);
    // The caller (a task counting its cost) heard of each billed attempt of the failed call.
    expect(spent).toEqual(ledger.map((record) => record.costUsd));
    expect(
      ledger.every((record) => record.outcome === 'error' && record.inputTokens === 6_000),
    ).toBe(true);
    expect(ledger.map((record) => record.attempts)).toEqual([1, 2, 3, 4]);
    const config = loadConfig(world.dataHome, world.project, {});
    expect(usageReport(world.dataHome, config, 'today', new Date())).toMatch(
      /: 1 call \(1 failed, 3 retried attempts\) · \$0\.0204 · 24,000 in/,
    );
  });

  it('stops retrying when the daily cap cannot cover another attempt', async ({
    worker,
    world,
    provider,
  }) => {
    // 20 KB of text: each attempt's worst case is about $0.042 (20,2xx bytes at $2, the 1-hour
    // cache write rate, + 1,000 output tokens at $2); each cut attempt bills $0.020002.
    const big = { ...CUT_MID_TOOL_JSON, usage: { input: 20_000 } };
    await worker([big, big, big, big], { dailyUsd: 0.075 });
    const request = {
      ...REQUEST,
      messages: [
        { role: 'user' as const, content: [{ type: 'text' as const, text: 'x'.repeat(20_000) }] },
      ],
    };
    const context = appContext(world);
    const failing = callModel({ request, bytesSent: 0, callOptions: FAST_CALLS }, context);
    // After two: $0.04 spent + $0.042 for a third > $0.075.
    await expect(failing).rejects.toThrow(
      /Stopped retrying w: its attempts so far cost \$0\.04: .* over the daily cap of \$0\.075/,
    );
    expect(provider.started!.requests).toHaveLength(2);
    const spent = readLedger(world.dataHome).reduce((total, record) => total + record.costUsd, 0);
    expect(spent).toBeCloseTo(0.040004, 12);
  });
});
