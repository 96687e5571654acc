import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runClaude, runClaudeCommand, type ClaudeRun } from '../helpers/claude-cli.ts';
import { byAssistantTurn, startFakeProvider, type FakeProvider } from '../helpers/fake-provider.ts';
import { REPO_ROOT } from '../helpers/mcp-server.ts';
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

describe('the plugin inside the real Claude Code', () => {
  it('passes `claude plugin validate --strict`', async () => {
    const validation = await runClaudeCommand(['plugin', 'validate', REPO_ROOT, '--strict'], {
      home: world.home,
      cwd: REPO_ROOT,
    });
    expect(validation.exitCode, validation.stdout + validation.stderr).toBe(0);
    expect(validation.stdout).toMatch(/Validation passed/);
  });

  it('loaded with --plugin-dir, delegates a 300 KB log: the worker reads it, the supervisor gets < 3 KB', async () => {
    const run = await runSupervisor(REPO_ROOT);
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
});
