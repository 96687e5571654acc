import { describe, expect } from 'vitest';
import { readLedger } from '../../server/src/calls/ledger.ts';
import { taskTest as it } from '../helpers/task-world.ts';

// No git repository: these calls answer questions, they start no task.
it.override('repository', null);

const DAILY_USD = 0.01;

describe('a daily cap under an endpoint that reports as much as it possibly could', () => {
  it('3 processes × 10 concurrent calls: settled spend stays within the cap', async ({
    world,
    provider,
    server: servers,
  }) => {
    // Every byte of the body as a token, all of it written to the 1-hour cache (2 × input), and
    // every output token allowed: far above the old estimate (a token per 3 bytes at the input
    // price), exactly the new reservation.
    const fake = await provider.start({
      respond: (request) => {
        const bytes = Buffer.byteLength(request.rawBody);
        const output = Number(request.body.max_tokens);
        const usage = { input: 0, cacheWrite: bytes, cacheWrite1h: bytes, output };
        return { text: 'ok', usage, delayMs: 50 };
      },
    });
    world.writeConfig({
      budget: { dailyUsd: DAILY_USD },
      profiles: {
        w: {
          format: 'anthropic',
          baseUrl: fake.url,
          model: 'm',
          pool: 30,
          price: { inputPerMTok: 0.5, outputPerMTok: 0.5 },
        },
      },
    });
    const started = await Promise.all(Array.from({ length: 3 }, () => servers.start(world.env)));
    const jobs = Array.from({ length: 10 }, (_, index) => ({
      id: `j${index}`,
      task: `job ${index}`,
      max_output_tokens: 300,
    }));
    const results = await Promise.all(
      started.map((server) => server.callText('delegate_batch', { jobs })),
    );
    const refusals = results.flatMap(
      (result) => result.text.match(/Daily budget reached/g) ?? [],
    ).length;
    const ledger = readLedger(world.dataHome);
    const spent = ledger.reduce((total, record) => total + record.costUsd, 0);
    // About 14 calls of $0.0007 fit; under the old estimate (~$0.00023 a call) all 30 ran: $0.021.
    expect(spent).toBeLessThanOrEqual(DAILY_USD);
    expect(refusals).toBeGreaterThan(0);
    expect(fake.requests.length + refusals).toBe(30);
    expect(ledger).toHaveLength(fake.requests.length);
    // Each call billed what the endpoint reported: 2 × $0.5 per byte-token, $0.5 per output token.
    for (const request of fake.requests) {
      const bytes = Buffer.byteLength(request.rawBody);
      const billed = (bytes * 1 + 300 * 0.5) / 1e6;
      expect(ledger.some((record) => Math.abs(record.costUsd - billed) < 1e-12)).toBe(true);
    }
  });
});
