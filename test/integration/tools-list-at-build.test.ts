import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServer } from '../../server/src/server.ts';
import { hookAnswerTool } from '../../server/src/tools/hook-answer.ts';
import { TOOLS } from '../../server/src/tools/registry.ts';
import { PLUGIN_ROOT } from '../helpers/mcp-server.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const BUILT_LIST = join(PLUGIN_ROOT, 'dist', 'tools-list.json');

let world: TempEnv;
beforeEach(() => {
  world = createTempEnv();
});
afterEach(() => world.cleanup());

/** What the SDK itself lists for the registry's tools: each zod schema converted, in process. */
async function listedBySdk(): Promise<Tool[]> {
  const server = createServer({
    context: {
      env: world.env,
      projectDir: world.project,
      dataHome: world.dataHome,
      now: () => new Date(),
      pluginRoot: PLUGIN_ROOT,
    },
    tools: TOOLS,
    hookTools: [hookAnswerTool],
    loadServices: () => Promise.reject(new Error('tools/list loads no services')),
    version: 'test',
    log: () => undefined,
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'sdk-list', version: '1' });
  await server.connect(serverSide);
  await client.connect(clientSide);
  try {
    return (await client.listTools()).tools;
  } finally {
    await client.close();
  }
}

/** tools/list of the bundle in `dist` (a copy of plugin/dist), over stdio. */
async function listedByBundle(dist: string): Promise<Tool[]> {
  const client = new Client({ name: 'bundle-list', version: '1' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [join(dist, 'server.mjs')],
      env: world.env,
      stderr: 'ignore',
    }),
  );
  try {
    return (await client.listTools()).tools;
  } finally {
    await client.close();
  }
}

describe('tools/list written at build time (dist/tools-list.json)', () => {
  it('is exactly what the SDK lists for the sources’ tools, and the bundle serves it', async () => {
    const sdk = await listedBySdk();
    const built = JSON.parse(readFileSync(BUILT_LIST, 'utf8')) as { tools: Tool[] };
    expect(built.tools).toEqual(sdk);
    expect(built.tools.map((tool) => tool.name)).toEqual([
      ...TOOLS.map((tool) => tool.name),
      'hook_answer',
    ]);
    expect(await listedByBundle(join(PLUGIN_ROOT, 'dist'))).toEqual(sdk);
  });

  it('is what a server answers, and without it (or damaged) the SDK answers the same', async () => {
    const dist = join(world.root, 'dist');
    cpSync(join(PLUGIN_ROOT, 'dist'), dist, { recursive: true });
    const sdk = await listedBySdk();

    // The file is what is served: a marked copy comes back as written.
    const marked = JSON.parse(readFileSync(BUILT_LIST, 'utf8')) as { tools: Tool[] };
    marked.tools[0] = { ...marked.tools[0]!, description: 'Marked at build.' };
    writeFileSync(join(dist, 'tools-list.json'), JSON.stringify(marked));
    expect((await listedByBundle(dist))[0]?.description).toBe('Marked at build.');

    for (const damaged of ['{"tools": [', '{"tools": 3}', '']) {
      writeFileSync(join(dist, 'tools-list.json'), damaged);
      expect(await listedByBundle(dist)).toEqual(sdk);
    }
    rmSync(join(dist, 'tools-list.json'));
    expect(await listedByBundle(dist)).toEqual(sdk);
  });
});
