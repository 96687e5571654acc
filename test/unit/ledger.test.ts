import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  appendLedger,
  ledgerDir,
  readLedger,
  type LedgerRecord,
} from '../../server/src/calls/ledger.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';

let world: TempEnv;
beforeEach(() => {
  world = createTempEnv();
});
afterEach(() => world.cleanup());

function record(overrides: Partial<LedgerRecord> = {}): LedgerRecord {
  return {
    ts: '2026-11-30T12:00:00.000Z',
    callId: 'c1',
    profile: 'code',
    format: 'openai',
    modelAsked: 'deepseek-chat',
    modelAnswered: 'deepseek-chat',
    inputTokens: 1200,
    outputTokens: 300,
    cachedInputTokens: 0,
    reasoningTokens: 0,
    costUsd: 0.0007,
    latencyMs: 850,
    outcome: 'ok',
    attempts: 1,
    bytesSent: 4000,
    supervisorTokensAvoided: 1000,
    ...overrides,
  };
}

describe('ledger', () => {
  it('appends one line per call to the file of the UTC day the call ended', async () => {
    await appendLedger(world.dataHome, record({ callId: 'a' }));
    await appendLedger(world.dataHome, record({ callId: 'b', ts: '2026-11-30T23:59:59.999Z' }));
    await appendLedger(world.dataHome, record({ callId: 'c', ts: '2026-12-01T00:00:00.000Z' }));
    const file = join(ledgerDir(world.dataHome), '2026-11-30.jsonl');
    expect(readFileSync(file, 'utf8').split('\n')).toHaveLength(3);
    expect(readLedger(world.dataHome).map((r) => r.callId)).toEqual(['a', 'b', 'c']);
    expect(readLedger(world.dataHome, { sinceDay: '2026-12-01' }).map((r) => r.callId)).toEqual([
      'c',
    ]);
  });

  it('keeps every field, optional ones included', async () => {
    const full = record({ taskId: 't_ab12', failedOverFrom: 'fast', outcome: 'error', error: 'x' });
    await appendLedger(world.dataHome, full);
    expect(readLedger(world.dataHome)).toEqual([full]);
  });

  it('skips torn and invalid lines and reads on', async () => {
    await appendLedger(world.dataHome, record({ callId: 'before' }));
    const file = join(ledgerDir(world.dataHome), '2026-11-30.jsonl');
    appendFileSync(file, '{"ts":"2026-11-30T12:00:00.000Z","callId":"torn","prof\n');
    appendFileSync(file, '{"ts":"2026-11-30T12:00:00.000Z","callId":"no-numbers"}\n');
    appendFileSync(file, 'not json\n\n');
    await appendLedger(world.dataHome, record({ callId: 'after' }));
    expect(readLedger(world.dataHome).map((r) => r.callId)).toEqual(['before', 'after']);
  });

  it('truncates a long error so lines stay short enough to append atomically', async () => {
    await appendLedger(world.dataHome, record({ outcome: 'error', error: 'E'.repeat(20_000) }));
    const [line] = readFileSync(join(ledgerDir(world.dataHome), '2026-11-30.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean);
    expect(Buffer.byteLength(line!)).toBeLessThan(4096);
    expect(readLedger(world.dataHome)[0]?.error).toMatch(/^E+…$/);
  });

  it('returns nothing when no call was ever recorded', () => {
    expect(readLedger(world.dataHome)).toEqual([]);
  });

  it('keeps concurrent appends whole', async () => {
    const calls = Array.from({ length: 200 }, (_, index) =>
      appendLedger(world.dataHome, record({ callId: `c${index}`, error: 'e'.repeat(400) })),
    );
    await Promise.all(calls);
    expect(readLedger(world.dataHome)).toHaveLength(200);
  });
});
