import { existsSync, lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runClaude, runClaudeCommand, type ClaudeRun } from '../helpers/claude-cli.ts';
import { byAssistantTurn, startFakeProvider, type FakeProvider } from '../helpers/fake-provider.ts';
import { PLUGIN_ROOT, REPO_ROOT } from '../helpers/mcp-server.ts';
import { gitMarketplace, toolName, toolResults } from '../helpers/supervisor.ts';
import { createTempEnv, makeLog, type TempEnv } from '../helpers/temp-env.ts';

const WORKER_ANSWER = 'WORKER-ANSWER: one ERROR, disk full on /var/data at 04:00.';

let world: TempEnv;
let worker: FakeProvider;
let supervisor: FakeProvider;
let log: string;

beforeEach(async () => {
  world = createTempEnv();
  log = makeLog(300 * 1024);
  world.writeProjectFile('logs/big.log', log);
  worker = await startFakeProvider({ respond: () => ({ text: WORKER_ANSWER }) });
  world.writeConfig({
    defaultProfile: 'local',
    profiles: {
      local: {
        format: 'openai',
        baseUrl: worker.openaiBaseUrl,
        model: 'worker-model',
        local: true,
      },
    },
  });
  supervisor = await startFakeProvider({
    respond: byAssistantTurn([
      {
        toolUses: [
          {
            name: toolName('delegate'),
            input: { task: 'List every error', files: ['logs/big.log'] },
          },
        ],
      },
      { text: 'The worker found one error.' },
    ]),
  });
});
afterEach(async () => {
  await worker.close();
  await supervisor.close();
  world.cleanup();
});

function runSupervisor(pluginDir?: string): Promise<ClaudeRun> {
  return runClaude({
    prompt: 'Summarise the errors in logs/big.log',
    cwd: world.project,
    home: world.home,
    baseUrl: supervisor.url,
    ...(pluginDir ? { pluginDir } : {}),
    allowedTools: [toolName('delegate')],
    env: {
      DELEGATE_HOME: world.dataHome,
      DELEGATE_DISCOVERY_URLS_FOR_TEST: world.env.DELEGATE_DISCOVERY_URLS_FOR_TEST!,
    },
  });
}

function expectDelegatedBigFile(run: ClaudeRun): void {
  expect(run.exitCode, run.stderr).toBe(0);
  expect(run.init?.mcp_servers).toContainEqual(
    expect.objectContaining({ name: 'plugin:delegate:workers', status: 'connected' }),
  );
  expect(run.init?.tools).toContain(toolName('delegate'));
  // The worker received every byte of the file.
  expect(worker.requests).toHaveLength(1);
  const workerPrompt = worker.requests[0]!.body.messages.map(
    (message: { content: string }) => message.content,
  ).join('\n');
  expect(workerPrompt).toContain(log);
  // The supervisor got the answer, small.
  expect(supervisor.unscripted).toEqual([]);
  const toolUseId = supervisor.requests[0] && findToolUseId(supervisor.requests[1]!.body.messages);
  const result = toolResults(supervisor.requests[1]!).get(toolUseId!);
  expect(result?.isError).toBe(false);
  expect(result?.text).toContain(WORKER_ANSWER);
  expect(Buffer.byteLength(result!.text)).toBeLessThan(3 * 1024);
  expect(run.result?.result).toContain('The worker found one error.');
}

function findToolUseId(messages: Array<{ role: string; content: unknown }>): string | undefined {
  for (const message of messages) {
    if (message.role !== 'assistant' || !Array.isArray(message.content)) continue;
    const use = message.content.find(
      (block: { type: string; name?: string }) =>
        block.type === 'tool_use' && block.name === toolName('delegate'),
    );
    if (use) return (use as { id: string }).id;
  }
  return undefined;
}

/** Bytes of every file below `dir` (links counted as links, not followed). */
function folderBytes(dir: string): number {
  let bytes = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    bytes += entry.isDirectory() ? folderBytes(path) : lstatSync(path).size;
  }
  return bytes;
}

describe('the plugin inside the real Claude Code', () => {
  it('passes `claude plugin validate --strict`: the marketplace and the plugin', async () => {
    for (const folder of [REPO_ROOT, PLUGIN_ROOT]) {
      const validation = await runClaudeCommand(['plugin', 'validate', folder, '--strict'], {
        home: world.home,
        cwd: REPO_ROOT,
      });
      expect(validation.exitCode, validation.stdout + validation.stderr).toBe(0);
      expect(validation.stdout).toMatch(/Validation passed/);
    }
  });

  it('loaded with --plugin-dir, delegates a 300 KB log: the worker reads it, the supervisor gets < 3 KB', async () => {
    const run = await runSupervisor(PLUGIN_ROOT);
    expectDelegatedBigFile(run);
    console.info(`e2e --plugin-dir run: ${run.wallMs.toFixed(0)} ms wall`);
  });

  it('installed the way users install it (marketplace add + plugin install), does the same', async () => {
    const marketplace = gitMarketplace(world.root);
    const options = {
      home: world.home,
      cwd: world.project,
      env: { DELEGATE_HOME: world.dataHome },
    };
    const added = await runClaudeCommand(['plugin', 'marketplace', 'add', marketplace], options);
    expect(added.exitCode, added.stdout + added.stderr).toBe(0);
    const installed = await runClaudeCommand(
      ['plugin', 'install', 'delegate@delegate-test'],
      options,
    );
    expect(installed.exitCode, installed.stdout + installed.stderr).toBe(0);
    const run = await runSupervisor();
    expectDelegatedBigFile(run);
    const plugin = run.init?.plugins?.find((entry: { name: string }) => entry.name === 'delegate');
    // It runs from Claude Code's plugin cache, and the install pulled no dependencies into it.
    expect(plugin?.path).toContain(join(world.home, '.claude', 'plugins', 'cache'));
    expect(existsSync(join(plugin.path, 'dist', 'server.mjs'))).toBe(true);
    expect(existsSync(join(plugin.path, 'node_modules'))).toBe(false);
    console.info(`e2e installed run: ${run.wallMs.toFixed(0)} ms wall`);
  });

  it('installed from this checkout as the README says, after the tests ran here: only the plugin is copied, under 50 MB', async () => {
    // The checkout holds what running the tests leaves: the dev dependencies and the pinned
    // Claude Code CLI (this test runs it), hundreds of MB that must not reach the plugin cache.
    expect(existsSync(join(REPO_ROOT, 'node_modules'))).toBe(true);
    expect(existsSync(join(REPO_ROOT, '.cache'))).toBe(true);
    const options = {
      home: world.home,
      cwd: world.project,
      env: { DELEGATE_HOME: world.dataHome },
    };
    const added = await runClaudeCommand(['plugin', 'marketplace', 'add', REPO_ROOT], options);
    expect(added.exitCode, added.stdout + added.stderr).toBe(0);
    const installed = await runClaudeCommand(['plugin', 'install', 'delegate@delegate'], options);
    expect(installed.exitCode, installed.stdout + installed.stderr).toBe(0);
    const run = await runSupervisor();
    expectDelegatedBigFile(run);
    // What Claude Code stored for the install: the copy in its plugin cache (one version).
    const store = join(world.home, '.claude', 'plugins');
    const versions = readdirSync(join(store, 'cache', 'delegate', 'delegate'));
    expect(versions).toHaveLength(1);
    const copied = readdirSync(join(store, 'cache', 'delegate', 'delegate', versions[0]!)).sort();
    expect(copied).toContain('dist');
    for (const devOnly of ['node_modules', '.cache', 'server', 'test', 'bench', 'package.json']) {
      expect(copied).not.toContain(devOnly);
    }
    const bytes = folderBytes(store);
    expect(bytes).toBeLessThan(50 * 1024 * 1024);
    console.info(
      `plugin store after installing from the checkout: ${(bytes / 1024 / 1024).toFixed(1)} MB; ` +
        `the copy holds ${copied.join(' ')}`,
    );
  });
});
