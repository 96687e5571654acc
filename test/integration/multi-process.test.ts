import { describe, expect } from 'vitest';
import { readLedger } from '../../server/src/calls/ledger.ts';
import type { ServerHandle } from '../helpers/mcp-server.ts';
import { taskTest as it, type ServerLauncher } from '../helpers/task-world.ts';
import { waitFor } from '../helpers/wait.ts';
import { scaledMs } from '../helpers/timing.ts';

// No git repository: these calls answer questions, they start no task.
it.override('repository', null);

function startServers(servers: ServerLauncher, count: number): Promise<ServerHandle[]> {
  return Promise.all(Array.from({ length: count }, () => servers.start()));
}

const batch = (count: number, extra: Record<string, unknown> = {}) => ({
  jobs: Array.from({ length: count }, (_, index) => ({
    id: `j${index}`,
    task: `job ${index}`,
    ...extra,
  })),
});

describe('many server processes share pools and the budget', () => {
  it('4 processes × 10 calls against a pool of 3: the worker never sees more than 3 at once', async ({
    world,
    provider,
    server: servers,
  }) => {
    const fake = await provider.start({ respond: () => ({ text: 'done', delayMs: 150 }) });
    world.writeConfig({
      profiles: { w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm', pool: 3 } },
    });
    const results = await Promise.all(
      (await startServers(servers, 4)).map((server) =>
        server.callText('delegate_batch', batch(10)),
      ),
    );
    for (const result of results) expect(result.text).toMatch(/^10 of 10 jobs succeeded\./);
    expect(fake.requests).toHaveLength(40);
    expect(fake.maxInFlight).toBe(3);
  });

  it('a holder SIGKILLed mid-call frees its slot for the others at once', async ({
    world,
    provider,
    server: servers,
  }) => {
    let calls = 0;
    const fake = await provider.start({
      respond: () => (++calls === 1 ? { kind: 'hang' } : { text: 'second caller served' }),
    });
    world.writeConfig({
      profiles: { w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm', pool: 1 } },
    });
    const [holder, other] = await startServers(servers, 2);
    void holder!.callText('delegate', { task: 'hangs' }).catch(() => undefined);
    await waitFor(() => fake.requests.length === 1);
    process.kill(holder!.pid!, 'SIGKILL');
    const started = Date.now();
    const { text, isError } = await other!.callText('delegate', { task: 'next' });
    expect(isError).toBe(false);
    expect(text).toContain('second caller served');
    expect(Date.now() - started).toBeLessThan(scaledMs(3_000));
  });

  it('50 concurrent calls from 5 processes racing a small daily cap: settled spend stays under it', async ({
    world,
    provider,
    server: servers,
  }) => {
    // Each call costs $0.00505 (50 in + 5,000 out tokens at $1/MTok); its worst case is a little more.
    const fake = await provider.start({
      respond: () => ({ text: 'ok', usage: { input: 50, output: 5_000 }, delayMs: 50 }),
    });
    world.writeConfig({
      budget: { dailyUsd: 0.1 },
      profiles: {
        w: {
          format: 'openai',
          baseUrl: fake.openaiBaseUrl,
          model: 'm',
          pool: 50,
          price: { inputPerMTok: 1, outputPerMTok: 1 },
        },
      },
    });
    const results = await Promise.all(
      (await startServers(servers, 5)).map((server) =>
        server.callText('delegate_batch', batch(10, { max_output_tokens: 5_000 })),
      ),
    );
    const refusals = results.flatMap(
      (result) => result.text.match(/Daily budget reached/g) ?? [],
    ).length;
    const spent = readLedger(world.dataHome).reduce((sum, record) => sum + record.costUsd, 0);
    expect(spent).toBeLessThanOrEqual(0.1);
    expect(refusals).toBeGreaterThan(0);
    expect(fake.requests.length + refusals).toBe(50);
    expect(spent).toBeCloseTo(fake.requests.length * 0.00505, 6);
  });
});

describe('delegate_batch', () => {
  it('answers in input order, isolates failures and reports progress as jobs finish', async ({
    world,
    provider,
    server: servers,
  }) => {
    const fake = await provider.start({
      respond: (request) => {
        const prompt = JSON.stringify(request.body);
        if (prompt.includes('job 1'))
          return { kind: 'error', status: 400, body: { error: { message: 'bad job' } } };
        return {
          text: `answer for ${/job (\d)/.exec(prompt)?.[0]}`,
          delayMs: prompt.includes('job 0') ? 200 : 0,
        };
      },
    });
    world.writeConfig({
      profiles: { w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm' } },
    });
    const [server] = await startServers(servers, 1);
    const progress: Array<{ progress: number; total?: number; message?: string }> = [];
    const result = await server!.client.callTool(
      { name: 'delegate_batch', arguments: batch(3) },
      undefined,
      {
        onprogress: (notification) => progress.push(notification),
      },
    );
    const text = (result.content as Array<{ text: string }>)[0]!.text;
    expect(text).toMatch(
      /^2 of 3 jobs succeeded\.\n\n## job 1 \(j0\): ok\nanswer for job 0[\s\S]*## job 2 \(j1\): FAILED\n.*bad job[\s\S]*## job 3 \(j2\): ok\nanswer for job 2/,
    );
    // The SDK client handles notifications a microtask late, so the last one can land after the
    // response it precedes on the wire and be dropped; the ones before must all arrive, in order.
    expect(progress.map((entry) => entry.progress).slice(0, 2)).toEqual([1, 2]);
    expect(progress.every((entry) => entry.total === 3)).toBe(true);
    const usage = await server!.callText('usage', { period: 'today' });
    expect(usage.text).toMatch(/^Today \(\d{4}-\d{2}-\d{2} UTC\): 3 calls \(1 failed\)/);
    expect(usage.text).toContain('Budget: none set');
  });
});
