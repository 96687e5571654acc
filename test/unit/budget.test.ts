import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  budgetStatus,
  fitToTaskBudget,
  reserveBudget,
  TaskBudgetReached,
  worstCaseCost,
  type BudgetConfig,
  type Lock,
} from '../../server/src/calls/budget.ts';
import { appendLedger, type LedgerRecord } from '../../server/src/calls/ledger.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';

let world: TempEnv;
beforeEach(() => {
  world = createTempEnv();
});
afterEach(() => world.cleanup());

const NOW = new Date('2026-11-30T12:00:00Z');
const LIVE = { pid: 100, startTime: 'live' };
const DEAD = { pid: 200, startTime: 'dead' };

/** In-process stand-in for the cross-process lock: actions run one after another. */
function promiseChainLock(): Lock {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(action: () => Promise<T>) => {
    const run = tail.then(action, action);
    tail = run.catch(() => undefined);
    return run;
  };
}

function reserve(budget: BudgetConfig, worstCaseUsd: number, identity = LIVE) {
  return reserveBudget({
    dataHome: world.dataHome,
    budget,
    worstCaseUsd,
    lock: promiseChainLock(),
    isAlive: (_pid, startTime) => startTime !== 'dead',
    identity,
    label: 'test call',
    now: () => NOW,
  });
}

function spend(costUsd: number, ts = NOW.toISOString()) {
  const record: LedgerRecord = {
    ts,
    callId: `c${Math.random()}`,
    profile: 'code',
    format: 'openai',
    modelAsked: 'm',
    modelAnswered: 'm',
    inputTokens: 1,
    outputTokens: 1,
    cachedInputTokens: 0,
    reasoningTokens: 0,
    costUsd,
    latencyMs: 1,
    outcome: 'ok',
    attempts: 1,
    bytesSent: 0,
    supervisorTokensAvoided: 0,
  };
  return appendLedger(world.dataHome, record);
}

const reservationFiles = () => {
  const dir = join(world.dataHome, 'budget', 'reservations');
  return existsSync(dir) ? readdirSync(dir) : [];
};

describe('reserveBudget', () => {
  it('is a no-op without a budget', async () => {
    const reservation = await reserve({}, 1_000);
    await reservation.settle(999);
    await reservation.release();
    expect(reservationFiles()).toEqual([]);
  });

  it('refuses a call over the daily cap, with the numbers and how to raise the cap', async () => {
    await spend(0.5, '2026-11-29T23:00:00Z'); // yesterday (UTC) does not count
    await spend(0.9);
    const refusal = reserve({ dailyUsd: 1 }, 0.2);
    await expect(refusal).rejects.toThrow(/spent today \$0\.90 /);
    await expect(refusal).rejects.toThrow(/reserved by calls in flight \$0\.00 /);
    await expect(refusal).rejects.toThrow(/this call's worst case \$0\.20 /);
    await expect(refusal).rejects.toThrow(/daily cap of \$1\.00/);
    await expect(refusal).rejects.toThrow(/"budget": \{"dailyUsd": 2\} in .*config\.json/);
    expect(reservationFiles()).toEqual([]);
  });

  it('shows small amounts to the hundredth of a cent', async () => {
    await expect(reserve({ dailyUsd: 0.001 }, 0.0012)).rejects.toThrow(
      /worst case \$0\.0012 = \$0\.0012, over the daily cap of \$0\.001 .*"dailyUsd": 1\}/,
    );
  });

  it('refuses a call whose worst case is over the per-task cap', async () => {
    await expect(reserve({ perTaskUsd: 0.05 }, 0.2)).rejects.toThrow(
      /worst case \$0\.20 is over the per-task cap of \$0\.05\..*"perTaskUsd": 1/,
    );
  });

  it('counts live reservations toward the cap until they are settled', async () => {
    const first = await reserve({ dailyUsd: 1 }, 0.6);
    expect(reservationFiles()).toEqual([`${first.id}.json`]);
    await expect(reserve({ dailyUsd: 1 }, 0.5)).rejects.toThrow(/reserved .* \$0\.60 /);
    await spend(0.1); // the caller writes the actual cost, then settles
    await first.settle(0.1);
    await first.settle(0.1);
    const second = await reserve({ dailyUsd: 1 }, 0.5);
    await second.release();
    await second.release();
    expect(reservationFiles()).toEqual([]);
  });

  it('ignores and clears the reservation of a holder that died', async () => {
    await reserve({ dailyUsd: 1 }, 0.9, DEAD);
    const reservation = await reserve({ dailyUsd: 1 }, 0.9);
    expect(reservationFiles()).toEqual([`${reservation.id}.json`]);
  });

  it('allows spending exactly up to the cap', async () => {
    for (let call = 0; call < 10; call += 1) await spend(0.1);
    await expect(reserve({ dailyUsd: 1.1 }, 0.1)).resolves.toBeDefined();
  });
});

describe('retries and over-runs', () => {
  it('renews a reservation for another attempt only while spend and reservations fit the cap', async () => {
    const budget = { dailyUsd: 1 };
    const retrying = await reserve(budget, 0.4);
    const other = await reserve(budget, 0.4);
    await spend(0.15); // the failed attempt's reported usage, in the ledger
    await retrying.renew(0.15); // 0.15 + 0.4 + 0.4 fits
    await spend(0.15);
    await expect(retrying.renew(0.15)).rejects.toThrow(
      /Stopped retrying test call: its attempts so far cost \$0\.30: spent today \$0\.30 \+ reserved .* \$0\.80 is over the daily cap of \$1\.00/,
    );
    expect(reservationFiles()).toEqual([`${other.id}.json`]);
    const perCall = await reserve({ perTaskUsd: 0.5 }, 0.3);
    await expect(perCall.renew(0.25)).rejects.toThrow(
      /cost \$0\.25, and another could cost \$0\.30, over the per-task cap of \$0\.50/,
    );
  });

  it('after an attempt costs more than its reservation, admits no new call until the calls then in flight settle', async () => {
    const budget = { dailyUsd: 10 };
    const overrunning = await reserve(budget, 0.1);
    const inFlight = await reserve(budget, 0.1);
    await spend(0.3);
    await overrunning.settle(0.3);
    await expect(reserve(budget, 0.1)).rejects.toThrow(
      /Daily budget paused: a call of test call cost \$0\.30, more than the \$0\.10 reserved for it, so 1 call in flight/,
    );
    await spend(0.1);
    await inFlight.settle(0.1);
    const next = await reserve(budget, 0.1);
    expect(existsSync(join(world.dataHome, 'budget', 'overrun.json'))).toBe(false);
    await next.release();
  });
});

describe('budgetStatus', () => {
  it('reports spend today, reservations and what is left', async () => {
    await spend(0.25);
    await reserve({ dailyUsd: 1 }, 0.5);
    expect(budgetStatus(world.dataHome, { dailyUsd: 1 }, NOW)).toEqual({
      spentTodayUsd: 0.25,
      reservedUsd: 0.5,
      leftTodayUsd: 0.25,
    });
    expect(budgetStatus(world.dataHome, {}, NOW)).toEqual({
      spentTodayUsd: 0.25,
      reservedUsd: 0.5,
    });
    const nobodyAlive = () => false;
    expect(budgetStatus(world.dataHome, {}, NOW, nobodyAlive).reservedUsd).toBe(0);
  });
});

describe('worstCaseCost', () => {
  it('assumes a token per byte sent and every output token allowed', () => {
    expect(worstCaseCost({ inputPerMTok: 1, outputPerMTok: 2 }, 3_000, 500)).toBeCloseTo(0.004, 12);
    expect(worstCaseCost({ inputPerMTok: 1, outputPerMTok: 2 }, 1, 0)).toBeCloseTo(1e-6, 12);
  });

  it('prices all the input at the dearest input rate: a write to the 1-hour cache', () => {
    const price = {
      inputPerMTok: 3,
      outputPerMTok: 15,
      cachedInputPerMTok: 0.3,
      cacheWritePerMTok: 3.75,
      cacheWrite1hPerMTok: 6,
    };
    expect(worstCaseCost(price, 1_000, 100)).toBeCloseTo((1_000 * 6 + 100 * 15) / 1e6, 12);
    const fiveMinutes = { ...price, cacheWrite1hPerMTok: undefined };
    expect(worstCaseCost(fiveMinutes, 1_000, 0)).toBeCloseTo((1_000 * 3.75) / 1e6, 12);
  });

  it('uses the long-context tier the input would reach', () => {
    const price = {
      inputPerMTok: 3,
      outputPerMTok: 15,
      tiers: [{ inputTokensAbove: 200_000, inputPerMTok: 6, outputPerMTok: 22.5 }],
    };
    expect(worstCaseCost(price, 200_000, 1_000)).toBeCloseTo((200_000 * 3 + 1_000 * 15) / 1e6, 12);
    expect(worstCaseCost(price, 200_001, 1_000)).toBeCloseTo(
      (200_001 * 6 + 1_000 * 22.5) / 1e6,
      12,
    );
  });
});

describe('fitToTaskBudget', () => {
  // $1 per million tokens both ways: 3,000 input bytes are at most 3,000 tokens ($0.003).
  const price = { inputPerMTok: 1, outputPerMTok: 1 };
  const request = { maxOutputTokens: 8_000 };

  it('keeps the request when its worst case fits in what is left', () => {
    expect(fitToTaskBudget(request, price, 3_000, { capUsd: 1, spentUsd: 0.5 })).toBe(request);
  });

  it('shrinks the output allowance to what is left, so the worst case lands on the cap', () => {
    const fitted = fitToTaskBudget(request, price, 3_000, { capUsd: 0.01, spentUsd: 0.005 });
    expect(fitted.maxOutputTokens).toBe(2_000);
    expect(worstCaseCost(price, 3_000, fitted.maxOutputTokens)).toBeLessThanOrEqual(0.005 + 1e-12);
  });

  it('refuses a call that could not even write a short answer, with the numbers', () => {
    expect(() =>
      fitToTaskBudget(request, price, 3_000, { capUsd: 0.01, spentUsd: 0.0088 }),
    ).toThrow(TaskBudgetReached);
    expect(() =>
      fitToTaskBudget(request, price, 3_000, { capUsd: 0.01, spentUsd: 0.0088 }),
    ).toThrow(/budget reached: the task spent \$0\.0088 of its \$0\.01 cap/);
  });

  it('a free profile always fits', () => {
    const free = { inputPerMTok: 0, outputPerMTok: 0 };
    expect(fitToTaskBudget(request, free, 1e9, { capUsd: 0.01, spentUsd: 0.01 })).toBe(request);
  });
});
