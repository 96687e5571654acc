import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runClaude } from '../helpers/claude-cli.ts';
import { byAssistantTurn, startFakeProvider, type FakeProvider } from '../helpers/fake-provider.ts';
import { PLUGIN_ROOT, REPO_ROOT } from '../helpers/mcp-server.ts';
import { toolResults } from '../helpers/supervisor.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';

let world: TempEnv;
let supervisor: FakeProvider | undefined;
beforeEach(() => {
  world = createTempEnv();
});
afterEach(async () => {
  await supervisor?.close();
  supervisor = undefined;
  world.cleanup();
});

/** Lines that must reach the supervisor verbatim from the middle of every big output. */
const ERRORS = [
  'ERROR db: connection reset by peer (pool=main, attempt 3)',
  'FAIL src/cart.test.ts > applies the discount twice',
  "TypeError: Cannot read properties of undefined (reading 'total')",
  '    at applyDiscount (/srv/app/src/cart.ts:88:17)',
];

/** 200 KB of ordinary log lines with the error lines in the middle. */
function appLog(): string {
  const lines = Array.from(
    { length: 4_000 },
    (_, i) =>
      `2026-11-30T03:00:${String(i % 60).padStart(2, '0')}Z INFO request ${i} served in ${i % 97} ms`,
  );
  lines.splice(2_000, 0, ...ERRORS);
  return `${lines.join('\n')}\n`;
}

/** 120 lines of 1,900 characters: few lines, many bytes (line counts are not bytes). */
function wideLog(): string {
  const lines = Array.from({ length: 120 }, (_, i) => `${i}:${'w'.repeat(1_900)}`);
  lines.splice(35, 0, ...ERRORS);
  return `${lines.join('\n')}\n`;
}

/**
 * Commands that really print a big file, in the ways a command line cannot be read ahead
 * (the predictive layer lets all of them through): only measuring their output catches them.
 */
const DUMPS = [
  'git show HEAD:app.log',
  'git cat-file -p HEAD:app.log',
  "grep '' app.log",
  'python3 -c "import sys; sys.stdout.write(open(\'app.log\').read())"',
  "node -e \"process.stdout.write(require('fs').readFileSync('app.log'))\"",
  "perl -ne 'print' app.log",
  'dd if=app.log 2>/dev/null',
  'cp app.log /dev/stdout',
  'diff /dev/null app.log',
  'paste app.log',
  'f=app.log; cat $f',
  'cat $(echo app.log)',
  'eval "cat app.log"',
  'head -n 50 wide.log',
  'strings app.log',
];

const use = (id: string, name: string, input: Record<string, unknown>) => ({
  toolUses: [{ id, name, input }],
});

describe('the output guard inside the real Claude Code', () => {
  it('gives the supervisor at most 4 KB of every big output, every error line kept; small outputs untouched', async () => {
    world.writeProjectFile('app.log', appLog());
    world.writeProjectFile('wide.log', wideLog());
    world.writeProjectFile('notes.txt', 'SMALL-NOTE\n');
    const git = (...args: string[]) => execFileSync('git', args, { cwd: world.project });
    git('init', '-q');
    git('add', '-A');
    git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'logs');
    // Another server's tool that answers with the whole log.
    const mcpConfig = JSON.stringify({
      mcpServers: {
        bigdata: {
          command: process.execPath,
          args: [join(REPO_ROOT, 'test', 'helpers', 'big-output-mcp-server.mjs')],
          env: { BIG_OUTPUT_FILE: join(world.project, 'app.log') },
        },
      },
    });
    const big = [
      ...DUMPS.map((command, i) =>
        use(`toolu_dump_${i}`, 'Bash', { command, description: 'dump' }),
      ),
      use('toolu_grep', 'Grep', {
        pattern: '.',
        path: world.project,
        glob: 'app*',
        output_mode: 'content',
        head_limit: 5_000,
      }),
      use('toolu_other_mcp', 'mcp__bigdata__dump', {}),
    ];
    // Provably big before they run: stopped, and the denial carries the same digest.
    const stopped = [
      use('toolu_read_whole', 'Read', { file_path: join(world.project, 'app.log') }),
      use('toolu_read_window', 'Read', {
        file_path: join(world.project, 'wide.log'),
        offset: 30,
        limit: 60,
      }),
      use('toolu_cat', 'Bash', { command: 'cat app.log', description: 'dump' }),
    ];
    const small = [
      use('toolu_echo', 'Bash', { command: 'echo tiny-output', description: 'small' }),
      use('toolu_read_small', 'Read', { file_path: join(world.project, 'notes.txt') }),
      use('toolu_head', 'Bash', { command: 'head -n 5 app.log', description: 'small' }),
    ];
    supervisor = await startFakeProvider({
      respond: byAssistantTurn([...big, ...stopped, ...small, { text: 'Finished.' }]),
    });
    const run = await runClaude({
      prompt: 'Look at the logs',
      cwd: world.project,
      home: world.home,
      baseUrl: supervisor.url,
      pluginDir: PLUGIN_ROOT,
      allowedTools: ['Bash', 'Read', 'Grep', 'mcp__bigdata__dump'],
      extraArgs: ['--mcp-config', mcpConfig],
      env: { DELEGATE_HOME: world.dataHome },
      timeoutMs: 180_000,
    });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(supervisor.unscripted).toEqual([]);
    const results = toolResults(supervisor.requests.at(-1)!);

    const problems: string[] = [];
    for (const { toolUses } of [...big, ...stopped]) {
      const { id } = toolUses[0]!;
      const isStopped = stopped.some((call) => call.toolUses[0]!.id === id);
      const result = results.get(id);
      const text = result?.text ?? '';
      const bytes = Buffer.byteLength(text);
      if (!result || result.isError !== isStopped)
        problems.push(
          `${id}: no result, or not ${isStopped ? 'stopped' : 'run'}: ${text.slice(0, 200)}`,
        );
      if (bytes > 4 * 1024) problems.push(`${id}: ${bytes} bytes`);
      const missing = ERRORS.filter((line) => !text.includes(line));
      if (missing.length > 0) problems.push(`${id}: lost ${JSON.stringify(missing)}`);
      const whole = isStopped ? /"files": \["\/\S+\.log"\]/ : /The full output is saved in \/\S+/;
      if (!whole.test(text)) problems.push(`${id}: does not say where the whole is`);
    }
    expect(problems).toEqual([]);
    expect(results.get('toolu_echo')!.text).toBe('tiny-output');
    expect(results.get('toolu_read_small')!.text).toContain('SMALL-NOTE');
    expect(results.get('toolu_head')!.text.split('\n')).toHaveLength(5);
    // The whole outputs are on disk for the worker, private to the user.
    const saved = readdirSync(join(world.dataHome, 'outputs'));
    expect(saved.length).toBeGreaterThan(0);
    expect(saved.length).toBeLessThanOrEqual(DUMPS.length + 2);
  }, 240_000);
});
