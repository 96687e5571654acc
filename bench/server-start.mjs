// Server spawn → tools/list answered, against a minimal SDK server bundled the same way.
import { build } from 'esbuild';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { median, timeProcess, timeToToolsList } from './lib.mjs';

const RUNS = 31;

export async function benchServerStart(root) {
  const temp = mkdtempSync(join(tmpdir(), 'delegate-bench-'));
  try {
    const minimal = join(temp, 'minimal.mjs');
    await build({
      absWorkingDir: root,
      entryPoints: ['bench/minimal-server.mjs'],
      outfile: minimal,
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      minifyWhitespace: true,
      minifySyntax: true,
      banner: {
        js: "import { createRequire as __bannerCreateRequire } from 'node:module'; const require = __bannerCreateRequire(import.meta.url);",
      },
      logLevel: 'error',
    });
    const env = { PATH: process.env.PATH, HOME: temp, DELEGATE_HOME: join(temp, 'data') };
    const ours = join(root, 'plugin', 'dist', 'server.mjs');
    const samples = { ours: [], minimal: [], bare: [] };
    let toolsListJson = '';
    await timeToToolsList(ours, env); // warm the page cache for both
    await timeToToolsList(minimal, env);
    // Interleaved, so drift in machine load hits both alike.
    for (let run = 0; run < RUNS; run += 1) {
      const result = await timeToToolsList(ours, env);
      samples.ours.push(result.ms);
      toolsListJson = result.json;
      samples.minimal.push((await timeToToolsList(minimal, env)).ms);
      samples.bare.push(await timeProcess(process.execPath, ['-e', '0'], env));
    }
    const ours50 = median(samples.ours);
    const minimal50 = median(samples.minimal);
    return {
      title: 'MCP server start-up',
      note: `Spawn → \`tools/list\` answered over stdio, initialize and tools/list sent at once; ${RUNS} interleaved runs each.`,
      rows: [
        [
          'delegate `dist/server.mjs` spawn → tools/list (median)',
          `${ours50.toFixed(1)} ms`,
          '≤ 200 ms',
        ],
        [
          'minimal bundled MCP SDK server, same measure (median)',
          `${minimal50.toFixed(1)} ms`,
          'baseline',
        ],
        ['ratio delegate / minimal', `${(ours50 / minimal50).toFixed(2)}×`, ''],
        ['bare `node -e 0` (median)', `${median(samples.bare).toFixed(1)} ms`, 'reference'],
        [
          '`tools/list` result JSON, the tools the model sees (`hook_answer`, for hooks only, left out)',
          `${modelSees(toolsListJson).length.toLocaleString('en-US')} chars`,
          '≤ 14,500 chars (issue 30)',
        ],
      ],
    };
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}

/**
 * The `tools/list` result without the tools listed for the app alone (MCP Apps visibility), which
 * Claude Code keeps out of the model's tool list and context.
 */
function modelSees(json) {
  const result = JSON.parse(json);
  const tools = result.tools.filter(
    (tool) => tool._meta?.ui?.visibility?.includes('model') ?? true,
  );
  return JSON.stringify({ ...result, tools });
}
