import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { callModel, failoverChain } from '../../server/src/calls/call-model.ts';
import { readLedger } from '../../server/src/calls/ledger.ts';
import { poolKeyOf } from '../../server/src/calls/pool-key.ts';
import { acquireSlot } from '../../server/src/calls/pool.ts';
import { loadConfig } from '../../server/src/profiles/load-config.ts';
import type { GenerateRequest } from '../../server/src/wire/spec.ts';
import { FAST_CALLS, appContext } from '../helpers/app-context.ts';
import type { Responder } from '../helpers/fake-provider.ts';
import { taskTest } from '../helpers/task-world.ts';
import type { ResolvedProfile } from '../../server/src/config/resolved-profile.ts';

const REQUEST: GenerateRequest = {
  messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
  maxOutputTokens: 100,
};
const it = taskTest
  .extend(
    'fake',
    ({ provider }) =>
      (respond: Responder) =>
        provider.start({ respond }),
  )
  .extend(
    'call',
    ({ world }) =>
      (profile?: string) =>
        callModel(
          {
            ...(profile ? { profile } : {}),
            request: REQUEST,
            bytesSent: 1000,
            callOptions: FAST_CALLS,
          },
          appContext(world),
        ),
  );
it.override('repository', null);

const PRICE = { inputPerMTok: 1, outputPerMTok: 2 };

describe('failover', () => {
  it('moves a cloud call along its chain when its pool is full', async ({ fake, call, world }) => {
    const first = await fake(() => ({ text: 'from a' }));
    const second = await fake(() => ({ text: 'from b' }));
    world.writeConfig({
      profiles: {
        a: {
          format: 'openai',
          baseUrl: first.openaiBaseUrl,
          model: 'ma',
          pool: 1,
          failover: ['b'],
          price: PRICE,
        },
        b: { format: 'openai', baseUrl: second.openaiBaseUrl, model: 'mb', price: PRICE },
      },
    });
    const profileA = loadConfig(world.dataHome, world.project, {}).profiles.get('a')!;
    const held = await acquireSlot(join(world.dataHome, 'slots'), poolKeyOf(profileA), 1);
    try {
      const served = await call('a');
      expect(served.profile.name).toBe('b');
      expect(served.failedOverFrom).toBe('a');
      expect(first.requests).toHaveLength(0);
      expect(readLedger(world.dataHome)).toEqual([
        expect.objectContaining({ profile: 'b', failedOverFrom: 'a', outcome: 'ok' }),
      ]);
    } finally {
      await held?.release();
    }
  });

  it('moves along when a profile fails with a retryable error, not with a non-retryable one', async ({
    fake,
    call,
    world,
  }) => {
    const down = await fake(() => ({ kind: 'error', status: 503 }));
    const refusing = await fake(() => ({ kind: 'error', status: 401 }));
    const up = await fake(() => ({ text: 'from c' }));
    world.writeConfig({
      profiles: {
        a: { format: 'openai', baseUrl: down.openaiBaseUrl, model: 'ma', failover: ['c'] },
        b: { format: 'openai', baseUrl: refusing.openaiBaseUrl, model: 'mb', failover: ['c'] },
        c: { format: 'openai', baseUrl: up.openaiBaseUrl, model: 'mc' },
      },
    });
    const served = await call('a');
    expect(served.profile.name).toBe('c');
    expect(down.requests).toHaveLength(4);
    await expect(call('b')).rejects.toThrow(/Worker profile "b".*answered HTTP 401/);
    expect(up.requests).toHaveLength(1);
    const ledger = readLedger(world.dataHome);
    expect(ledger.map((record) => [record.profile, record.outcome])).toEqual([
      ['a', 'error'],
      ['c', 'ok'],
      ['b', 'error'],
    ]);
  });

  it('never takes a local profile anywhere, whatever the chain says', () => {
    const local = { name: 'l', local: true, failover: ['c'] } as unknown as ResolvedProfile;
    const cloud = { name: 'c', failover: ['l'] } as unknown as ResolvedProfile;
    const config = {
      profiles: new Map([
        ['l', local],
        ['c', cloud],
      ]),
    } as never;
    expect(failoverChain(local, config)).toEqual([local]);
    expect(failoverChain(cloud, config)).toEqual([cloud]);
  });

  it('rejects at validation a local profile with a chain, and a chain into a local profile', ({
    world,
  }) => {
    world.writeConfig({
      profiles: {
        l: {
          format: 'openai',
          baseUrl: 'http://127.0.0.1:11434/v1',
          model: 'q',
          local: true,
          failover: ['c'],
        },
        c: { format: 'openai', baseUrl: 'https://x.test/v1', model: 'm' },
      },
    });
    expect(() => loadConfig(world.dataHome, world.project, {})).toThrow(
      /profiles\.l\.failover: a local profile never fails over/,
    );
    world.writeConfig({
      profiles: {
        l: { format: 'openai', baseUrl: 'http://127.0.0.1:11434/v1', model: 'q', local: true },
        c: { format: 'openai', baseUrl: 'https://x.test/v1', model: 'm', failover: ['l'] },
      },
    });
    expect(() => loadConfig(world.dataHome, world.project, {})).toThrow(
      /profiles\.c\.failover: "l" is local; a cloud profile never fails over to a local one/,
    );
  });
});

describe('cost and budget', () => {
  it('prices a call by the profile override and records it in the ledger', async ({
    fake,
    call,
    world,
  }) => {
    const up = await fake(() => ({ text: 'ok', usage: { input: 1_000_000, output: 500_000 } }));
    world.writeConfig({
      profiles: { p: { format: 'openai', baseUrl: up.openaiBaseUrl, model: 'm', price: PRICE } },
    });
    const served = await call();
    expect(served.costUsd).toBeCloseTo(2, 6);
    expect(readLedger(world.dataHome)[0]).toMatchObject({
      costUsd: 2,
      inputTokens: 1_000_000,
      supervisorTokensAvoided: 250,
    });
  });

  it('refuses a cloud profile with no known price while a budget is in force', async ({
    fake,
    call,
    world,
  }) => {
    const up = await fake(() => ({ text: 'ok' }));
    world.writeConfig({
      budget: { dailyUsd: 5 },
      profiles: { p: { format: 'openai', baseUrl: up.openaiBaseUrl, model: 'mystery-model' } },
    });
    await expect(call()).rejects.toThrow(
      /has no known price, and a budget is in force.*Add "price"/,
    );
    expect(up.requests).toHaveLength(0);
  });

  it('refuses a call whose worst case would pass the daily cap, saying the numbers and how to raise it', async ({
    fake,
    call,
    world,
  }) => {
    const up = await fake(() => ({ text: 'ok' }));
    world.writeConfig({
      budget: { dailyUsd: 0.0001 },
      profiles: {
        p: {
          format: 'openai',
          baseUrl: up.openaiBaseUrl,
          model: 'm',
          price: { inputPerMTok: 10, outputPerMTok: 30 },
        },
      },
    });
    await expect(call()).rejects.toThrow(/over the daily cap of \$0\.00.*"budget": \{"dailyUsd"/s);
    expect(up.requests).toHaveLength(0);
  });
});
