import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reserveBudget, type Lock } from '../../server/src/calls/budget.ts';
import { appendLedger, readLedger } from '../../server/src/calls/ledger.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';

let world: TempEnv;
beforeEach(() => {
  world = createTempEnv();
});
afterEach(() => world.cleanup());

const CALLS = 50;
const WORST_CASE_USD = 0.1;
const ACTUAL_USD = 0.07;
const DAILY_USD = 1;

/** In-process stand-in for the cross-process lock (that one is tested on its own). */
function promiseChainLock(): Lock {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(action: () => Promise<T>) => {
    const run = tail.then(action, action);
    tail = run.catch(() => undefined);
    return run;
  };
}

const withoutLock: Lock = (action) => action();

/** One model call as the engine makes it: reserve, "call", write the ledger, then settle. */
async function call(index: number, lock: Lock): Promise<'ok' | 'refused'> {
  let reservation;
  try {
    reservation = await reserveBudget({
      dataHome: world.dataHome,
      budget: { dailyUsd: DAILY_USD },
      worstCaseUsd: WORST_CASE_USD,
      lock,
      isAlive: () => true,
      identity: { pid: process.pid, startTime: 'test' },
      label: `call ${index}`,
    });
  } catch (error) {
    expect(String(error)).toMatch(/Daily budget reached/);
    return 'refused';
  }
  await sleep(index % 7); // calls finish out of order
  await appendLedger(world.dataHome, {
    ts: new Date().toISOString(),
    callId: `c${index}`,
    profile: 'code',
    format: 'openai',
    modelAsked: 'm',
    modelAnswered: 'm',
    inputTokens: 1000,
    outputTokens: 100,
    cachedInputTokens: 0,
    reasoningTokens: 0,
    costUsd: ACTUAL_USD,
    latencyMs: index % 7,
    outcome: 'ok',
    attempts: 1,
    bytesSent: 0,
    supervisorTokensAvoided: 0,
  });
  await reservation.settle(ACTUAL_USD);
  return 'ok';
}

function spentUsd(): number {
  return readLedger(world.dataHome).reduce((total, record) => total + record.costUsd, 0);
}

describe('budget under concurrent calls', () => {
  it(`never spends past the daily cap across ${CALLS} concurrent reservations`, async () => {
    const lock = promiseChainLock();
    const outcomes = await Promise.all(Array.from({ length: CALLS }, (_, i) => call(i, lock)));
    const granted = outcomes.filter((outcome) => outcome === 'ok').length;
    expect(spentUsd()).toBeLessThanOrEqual(DAILY_USD + 1e-9);
    // Between its ledger line and its settle a call counts twice (0.07 + 0.10): at least
    // ceil(0.9 / 0.17) = 6 calls must have been granted before the first refusal.
    expect(granted).toBeGreaterThanOrEqual(6);
    expect(granted).toBeLessThan(CALLS);
    expect(readLedger(world.dataHome)).toHaveLength(granted);
    expect(readdirSync(join(world.dataHome, 'budget', 'reservations'))).toEqual([]);
  });

  it('overspends without the lock (so the test above can catch a broken one)', async () => {
    const outcomes = await Promise.all(
      Array.from({ length: CALLS }, (_, i) => call(i, withoutLock)),
    );
    expect(outcomes.filter((outcome) => outcome === 'ok').length).toBeGreaterThan(14);
    expect(spentUsd()).toBeGreaterThan(DAILY_USD);
  });
});
