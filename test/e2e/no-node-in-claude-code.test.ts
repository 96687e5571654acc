// The plugin in the real Claude Code on a PATH without Node.js (the native installer needs none):
// Read still works, the session is told what to install, and nothing shows a stack trace.
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runClaude } from '../helpers/claude-cli.ts';
import { byAssistantTurn, startFakeProvider, type FakeProvider } from '../helpers/fake-provider.ts';
import { REPO_ROOT } from '../helpers/mcp-server.ts';
import { toolResults } from '../helpers/supervisor.ts';
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
  const path = join(world.root, 'path-without-node');
  mkdirSync(path);
  symlinkSync('/bin/sh', join(path, 'sh'));
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
    pluginDir: REPO_ROOT,
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
  expect(server?.status).toBe('failed');
  expect(run.stdout + run.stderr).not.toMatch(/at .*\.c?js:\d+|command not found/);
});
