// Provider engine: 8 one-shots against a fake with 1 s latency under pool 8 and pool 2, and
// the per-call overhead of our client against a bare fetch of the same instant fake.
import { build } from 'esbuild';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { median, startRawServer } from './lib.mjs';

const OVERHEAD_CALLS = 200;

async function bundle(root, temp, entry, name) {
  const outfile = join(temp, `${name}.mjs`);
  await build({
    absWorkingDir: root,
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    logLevel: 'error',
  });
  return import(outfile);
}

/** Runs one delegate_batch of `jobs` through a real server process; resolves with its wall time. */
async function timeBatch(root, env, jobs) {
  const server = await startRawServer(join(root, 'plugin', 'dist', 'server.mjs'), env);
  try {
    const started = performance.now();
    const text = await server.call('delegate_batch', { jobs });
    if (!text.startsWith(`${jobs.length} of ${jobs.length}`)) throw new Error(text);
    return performance.now() - started;
  } finally {
    server.close();
  }
}

export async function benchProviderEngine(root) {
  const temp = mkdtempSync(join(tmpdir(), 'delegate-bench-engine-'));
  try {
    const { startFakeProvider } = await bundle(root, temp, 'test/helpers/fake-provider.ts', 'fake');
    const { createClient } = await bundle(
      root,
      temp,
      'server/src/providers/create-client.ts',
      'client',
    );
    const rows = [];
    const slow = await startFakeProvider({ respond: () => ({ text: 'ok', delayMs: 1_000 }) });
    const jobs = Array.from({ length: 8 }, (_, index) => ({ task: `job ${index}` }));
    for (const pool of [8, 2]) {
      const dataHome = join(temp, `data-pool-${pool}`);
      mkdirSync(dataHome, { recursive: true });
      writeFileSync(
        join(dataHome, 'config.json'),
        JSON.stringify({
          profiles: { w: { format: 'openai', baseUrl: slow.openaiBaseUrl, model: 'm', pool } },
        }),
      );
      slow.maxInFlight = 0;
      const env = {
        PATH: process.env.PATH,
        HOME: temp,
        DELEGATE_HOME: dataHome,
        CLAUDE_PROJECT_DIR: temp,
      };
      const ms = await timeBatch(root, env, jobs);
      rows.push([
        `8 one-shots, fake with 1 s latency, pool ${pool}: wall / max in flight at the fake`,
        `${(ms / 1000).toFixed(2)} s / ${slow.maxInFlight}`,
        pool === 8 ? '≤ 1.5 s' : `in flight ≤ ${pool}`,
      ]);
    }
    await slow.close();

    const instant = await startFakeProvider({ respond: () => ({ text: 'ok' }) });
    // Four keys to redact from every reply, as a machine with a few profiles has.
    const keys = ['sk-bench-a', 'sk-bench-b', 'ghu_bench', 'bench-env'].map(
      (key) => `${key}-0123456789abcdef`,
    );
    const client = createClient(
      'openai',
      { baseUrl: instant.openaiBaseUrl, model: 'm' },
      () => keys,
    );
    const request = {
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      maxOutputTokens: 10,
    };
    const body = JSON.stringify({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 10,
      stream: true,
    });
    const ours = [];
    const bare = [];
    for (let call = 0; call < OVERHEAD_CALLS; call += 1) {
      let started = performance.now();
      await client.generate(request);
      ours.push(performance.now() - started);
      started = performance.now();
      const response = await fetch(`${instant.openaiBaseUrl}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      await response.text();
      bare.push(performance.now() - started);
    }
    await instant.close();
    const ours50 = median(ours);
    const bare50 = median(bare);
    rows.push([
      'one call through our client (stream parsed), instant fake (median)',
      `${ours50.toFixed(2)} ms`,
      '',
    ]);
    rows.push([
      'bare `fetch` + read of the same reply (median)',
      `${bare50.toFixed(2)} ms`,
      'baseline',
    ]);
    rows.push(['ratio client / bare fetch', `${(ours50 / bare50).toFixed(2)}×`, '']);
    return {
      title: 'Provider engine',
      note: `Batches run through a real \`dist/server.mjs\` (delegate_batch); overhead: ${OVERHEAD_CALLS} interleaved sequential calls each.`,
      rows,
    };
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}
