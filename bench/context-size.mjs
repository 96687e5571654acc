// Context size of a long worker run: the agent loop in-process with the real worker tools,
// against a fake provider, with the context policy (eviction, repeat cache) and without it.
// Run alone with `node bench/context-size.mjs`; `npm run bench` runs it with the others.
import { build } from 'esbuild';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from './lib.mjs';

const OVERHEAD_TURNS = 60;

export async function benchContextSize(root) {
  const temp = mkdtempSync(join(tmpdir(), 'delegate-bench-context-'));
  try {
    const helper = join(temp, 'agent-run.mjs');
    await build({
      absWorkingDir: root,
      stdin: {
        contents:
          "export * from './test/helpers/agent-run.ts';\n" +
          "export { NAIVE_CONTEXT } from './server/src/agent/context-policy.ts';\n",
        resolveDir: root,
        loader: 'ts',
      },
      outfile: helper,
      bundle: true,
      format: 'esm',
      platform: 'node',
      // Bundled CommonJS dependencies (fast-glob) call require(); ESM has none without this.
      banner: {
        js: "import { createRequire as __bannerCreateRequire } from 'node:module'; const require = __bannerCreateRequire(import.meta.url);",
      },
      logLevel: 'error',
    });
    const { LONG_RUN_TURNS, NAIVE_CONTEXT, longRunScript, runScriptedAgent, sampleText } =
      await import(helper);
    const longRoot = join(temp, 'long');
    mkdirSync(longRoot);
    const steps = longRunScript(longRoot);
    const turns = LONG_RUN_TURNS;
    const managed = await runScriptedAgent({ steps, root: longRoot, maxTurns: turns });
    const naive = await runScriptedAgent({
      steps,
      root: longRoot,
      maxTurns: turns,
      contextPolicy: NAIVE_CONTEXT,
    });
    // Overhead: many small distinct reads, so the policy tracks every result but the history stays small.
    const smallRoot = join(temp, 'small');
    mkdirSync(smallRoot);
    const small = [];
    for (let index = 0; index < OVERHEAD_TURNS; index += 1) {
      writeFileSync(join(smallRoot, `f${index}.txt`), sampleText(index, 2048));
      small.push({ toolUses: [{ name: 'read_file', input: { path: `f${index}.txt` } }] });
    }
    small.push({ text: 'done' });
    const overheadTurns = OVERHEAD_TURNS + 1;
    const withPolicy = [];
    const without = [];
    for (let round = 0; round < 3; round += 1) {
      const a = await runScriptedAgent({ steps: small, root: smallRoot, maxTurns: overheadTurns });
      const b = await runScriptedAgent({
        steps: small,
        root: smallRoot,
        maxTurns: overheadTurns,
        contextPolicy: NAIVE_CONTEXT,
      });
      withPolicy.push(...a.gapsMs);
      without.push(...b.gapsMs);
    }
    const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;
    const total = (run) => run.requests.reduce((sum, request) => sum + request.rawBody.length, 0);
    return {
      title: 'Context size of a long task',
      note:
        `A ${turns}-turn run of the agent loop (in-process, real worker tools, fake provider): each turn reads a different 40 KB file ` +
        'or runs a command with 110 KB of output (cut to 30 KB), then a final answer; the same script with the context policy ' +
        `(eviction above 64 KB of tool results, repeat cache) and with the full history. Overhead: ${OVERHEAD_TURNS} reads of small files, 3 rounds.`,
      rows: [
        [
          `largest request, ${turns} turns, with the policy`,
          `${kb(managed.largestRequestBytes)}`,
          'bounded',
        ],
        [
          `largest request, ${turns} turns, full history`,
          `${kb(naive.largestRequestBytes)} = ${(naive.largestRequestBytes / managed.largestRequestBytes).toFixed(1)}× the policy's`,
          'baseline',
        ],
        [
          'bytes sent over the whole run, policy / full history',
          `${kb(total(managed))} / ${kb(total(naive))}`,
          '',
        ],
        [
          'loop turn with a small read_file: fake’s reply → next request, policy / full history (median)',
          `${median(withPolicy).toFixed(2)} / ${median(without).toFixed(2)} ms`,
          '',
        ],
      ],
    };
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const section = await benchContextSize(join(dirname(fileURLToPath(import.meta.url)), '..'));
  console.log(section.title);
  for (const [figure, value, bar] of section.rows)
    console.log(`  ${figure}: ${value}${bar ? ` (${bar})` : ''}`);
}
