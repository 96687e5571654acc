// The plugin in the real Claude Code on a PATH without Node.js (the native installer needs none):
// Read still works, the session is told what to install, and nothing shows a stack trace. The
// server connects as a stand-in whose one tool says what to install (a failed server is cached
// as failed for 15 minutes); once Node.js is on PATH the next start has every tool.
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runClaude } from '../helpers/claude-cli.ts';
import { byAssistantTurn, startFakeProvider, type FakeProvider } from '../helpers/fake-provider.ts';
import { PLUGIN_ROOT } from '../helpers/mcp-server.ts';
import { pathWithoutNode } from '../helpers/no-node-path.ts';
import { toolName, toolResults } from '../helpers/supervisor.ts';
import { createTempEnv, makeLog, type TempEnv } from '../helpers/temp-env.ts';

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

it('without node on PATH: a whole Read of a big file goes through, and the session is told to install Node.js 20', async () => {
  const log = makeLog(200 * 1024);
  const big = world.writeProjectFile('big.log', log);
  const path = pathWithoutNode(world.root);
  supervisor = await startFakeProvider({
    respond: byAssistantTurn([
      { toolUses: [{ id: 'toolu_read_big', name: 'Read', input: { file_path: big } }] },
      { text: 'Read it.' },
    ]),
  });
  const run = await runClaude({
    prompt: 'Read big.log',
    cwd: world.project,
    home: world.home,
    baseUrl: supervisor.url,
    pluginDir: PLUGIN_ROOT,
    allowedTools: ['Read'],
    env: { DELEGATE_HOME: world.dataHome, PATH: path },
  });
  expect(run.exitCode, run.stderr).toBe(0);
  expect(supervisor.unscripted).toEqual([]);
  const read = toolResults(supervisor.requests[1]!).get('toolu_read_big');
  expect(read?.isError).toBe(false);
  expect(read?.text).toContain('INFO request 0 served');
  // The SessionStart hook's one line reached the supervisor's context.
  expect(JSON.stringify(supervisor.requests[0]!.body)).toContain(
    'delegate needs Node.js 20 or newer on PATH (no node found): install it from https://nodejs.org',
  );
  const server = run.init?.mcp_servers?.find((entry: { name: string }) =>
    entry.name.includes('delegate'),
  );
  expect(server?.status).toBe('connected');
  expect(delegateTools(run.init)).toEqual([toolName('setup')]);
  expect(run.stdout + run.stderr).not.toMatch(/at .*\.c?js:\d+|command not found/);

  // Node.js installed, Claude Code started again (same HOME): every tool, no /mcp step.
  await supervisor.close();
  supervisor = await startFakeProvider({ respond: byAssistantTurn([{ text: 'Hi.' }]) });
  const again = await runClaude({
    prompt: 'Hello',
    cwd: world.project,
    home: world.home,
    baseUrl: supervisor.url,
    pluginDir: PLUGIN_ROOT,
    env: { DELEGATE_HOME: world.dataHome },
  });
  expect(again.exitCode, again.stderr).toBe(0);
  expect(delegateTools(again.init)).toContain(toolName('delegate'));
  expect(delegateTools(again.init)).toContain(toolName('task_start'));
  expect(delegateTools(again.init)).not.toContain(toolName('setup'));
});

it('with a Node.js older than 20: the stand-in server names the version found', async () => {
  const path = pathWithoutNode(world.root, '18.19.0');
  supervisor = await startFakeProvider({ respond: byAssistantTurn([{ text: 'Hi.' }]) });
  const run = await runClaude({
    prompt: 'Hello',
    cwd: world.project,
    home: world.home,
    baseUrl: supervisor.url,
    pluginDir: PLUGIN_ROOT,
    env: { DELEGATE_HOME: world.dataHome, PATH: path },
  });
  expect(run.exitCode, run.stderr).toBe(0);
  expect(delegateTools(run.init)).toEqual([toolName('setup')]);
  const sent = JSON.stringify(supervisor.requests[0]!.body);
  expect(sent).toContain('delegate needs Node.js 20 or newer on PATH (found v18.19.0)');
});

/** The plugin server's tools in Claude Code's init event. */
function delegateTools(init: { tools?: string[] } | undefined): string[] {
  return (init?.tools ?? []).filter((name) => name.startsWith(toolName('')));
}
