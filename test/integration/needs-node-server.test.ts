// The server's launcher on a PATH without a usable Node.js: a stand-in server in plain sh that a
// real MCP client connects to, whose one tool says what to install (the real Claude Code case is
// test/e2e/no-node-in-claude-code.test.ts).
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PLUGIN_ROOT, SERVER_BUNDLE } from '../helpers/mcp-server.ts';
import { pathWithoutNode } from '../helpers/no-node-path.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';

let world: TempEnv;
let client: Client | undefined;
beforeEach(() => {
  world = createTempEnv();
});
afterEach(async () => {
  await client?.close();
  client = undefined;
  world.cleanup();
});

async function connect(path: string) {
  const transport = new StdioClientTransport({
    command: '/bin/sh',
    args: [join(PLUGIN_ROOT, 'launch', 'run-node.sh'), 'server', SERVER_BUNDLE],
    env: { ...world.env, PATH: path },
    stderr: 'pipe',
  });
  client = new Client({ name: 'delegate-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

describe('without a usable Node.js the server still connects, and says what to install', () => {
  it.for([
    ['no node on PATH', undefined, '(no node found)'],
    ['a Node.js older than 20', '18.19.0', '(found v18.19.0)'],
  ] as const)('%s', async ([, version, found]) => {
    const connected = await connect(pathWithoutNode(world.root, version));
    const said = `delegate needs Node.js 20 or newer on PATH ${found}: install it from https://nodejs.org`;
    expect(connected.getInstructions()).toContain(said);
    const { tools } = await connected.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['setup']);
    expect(tools[0]!.description).toContain(said);
    const called = await connected.callTool({ name: 'setup', arguments: {} });
    expect(called.isError).toBe(true);
    expect(JSON.stringify(called.content)).toContain('then restart Claude Code');
    await connected.ping();
    await expect(connected.listPrompts()).rejects.toThrow(/not served until Node\.js 20/);
  });
});
