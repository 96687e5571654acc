import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/mcp-server.ts';
import { startFakeProvider, type FakeProvider } from '../helpers/fake-provider.ts';
import { scaledMs } from '../helpers/timing.ts';

/**
 * Node 18/20 lose `AbortSignal.timeout` inside `AbortSignal.any` once garbage collection has
 * run. This runs the bundled client in a child with --expose-gc, collecting every few ms while
 * a stream stalls (idle timeout) or trickles past its total timeout, and checks both really abort.
 */
let dir: string;
let fake: FakeProvider | undefined;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'delegate-gc-'));
  await build({
    absWorkingDir: REPO_ROOT,
    entryPoints: ['server/src/providers/create-client.ts'],
    outfile: join(dir, 'client.mjs'),
    bundle: true,
    format: 'esm',
    platform: 'node',
    logLevel: 'error',
  });
  writeFileSync(
    join(dir, 'child.mjs'),
    `import { createClient } from './client.mjs';
const [baseUrl, idleTimeoutMs, totalTimeoutMs] = process.argv.slice(2);
const collector = setInterval(() => globalThis.gc(), 5);
const started = Date.now();
try {
  await createClient('openai', { baseUrl, model: 'm' }).generate(
    { messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], maxOutputTokens: 10 },
    { idleTimeoutMs: Number(idleTimeoutMs), totalTimeoutMs: Number(totalTimeoutMs), retry: { maxAttempts: 1 } },
  );
  console.log(JSON.stringify({ outcome: 'resolved', ms: Date.now() - started }));
} catch (error) {
  console.log(JSON.stringify({ outcome: error.kind, ms: Date.now() - started }));
}
clearInterval(collector);
`,
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

/** The child's outcome; spawned asynchronously, so the fake in this process keeps streaming. */
async function runChild(
  baseUrl: string,
  idleMs: number,
  totalMs: number,
): Promise<{ outcome: string; ms: number }> {
  const child = spawn(
    process.execPath,
    ['--expose-gc', join(dir, 'child.mjs'), baseUrl, String(idleMs), String(totalMs)],
    { stdio: ['ignore', 'pipe', 'inherit'], timeout: scaledMs(15_000) },
  );
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  await once(child, 'exit');
  return JSON.parse(stdout.trim()) as { outcome: string; ms: number };
}

describe('timeouts survive garbage collection (Node 20)', () => {
  it('the idle timeout aborts a stalled stream', async () => {
    fake = await startFakeProvider({ respond: () => ({ kind: 'hang' }) });
    const { outcome, ms } = await runChild(fake.openaiBaseUrl, 400, 60_000);
    expect(outcome).toBe('stalled');
    expect(ms).toBeGreaterThanOrEqual(390);
    expect(ms).toBeLessThan(scaledMs(5_000));
  });

  it('the idle limit counts from the last chunk: a stream that trickles within it completes', async () => {
    fake = await startFakeProvider({
      respond: () => ({ text: 'x'.repeat(12), chunkSize: 1, chunkDelayMs: 100 }),
    });
    // 12 chunks 100 ms apart: well past the 400 ms idle limit in all, never 400 ms silent.
    const { outcome, ms } = await runChild(fake.openaiBaseUrl, 400, 60_000);
    expect(outcome).toBe('resolved');
    expect(ms).toBeGreaterThanOrEqual(1_000);
  });

  it('the total timeout aborts a stream that trickles forever', async () => {
    fake = await startFakeProvider({
      respond: () => ({ text: 'x'.repeat(400), chunkSize: 1, chunkDelayMs: 50 }),
    });
    const { outcome, ms } = await runChild(fake.openaiBaseUrl, 1_000, 700);
    expect(outcome).toBe('timeout');
    expect(ms).toBeGreaterThanOrEqual(690);
    expect(ms).toBeLessThan(scaledMs(5_000));
  });
});
