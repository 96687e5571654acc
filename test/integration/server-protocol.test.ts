import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SERVER_BUNDLE, startServer, type ServerHandle } from '../helpers/mcp-server.ts';
import { waitFor } from '../helpers/wait.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';

let world: TempEnv;
let server: ServerHandle | undefined;
let child: ChildProcessWithoutNullStreams | undefined;

beforeEach(() => {
  world = createTempEnv();
});
afterEach(async () => {
  await server?.close();
  if (child && child.exitCode === null) child.kill('SIGKILL');
  server = undefined;
  child = undefined;
  world.cleanup();
});

const WRITES = { readOnlyHint: false, destructiveHint: false, idempotentHint: false } as const;
const READS = { readOnlyHint: true, destructiveHint: false, idempotentHint: true } as const;
const EXPECTED_ANNOTATIONS = {
  delegate: { ...WRITES, openWorldHint: true },
  delegate_batch: { ...WRITES, openWorldHint: true },
  explore: { ...READS, idempotentHint: false, openWorldHint: true },
  task_start: { ...WRITES, openWorldHint: true },
  task_status: { ...READS, openWorldHint: false },
  task_progress: { ...READS, openWorldHint: false },
  task_answer: { ...WRITES, openWorldHint: false },
  task_cancel: {
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: true,
    openWorldHint: false,
  },
  task_result: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  },
  task_cleanup: {
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: true,
    openWorldHint: false,
  },
  agents_list: { ...READS, openWorldHint: false },
  providers: { ...READS, openWorldHint: true },
  provider_set: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  },
  provider_remove: {
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: true,
    openWorldHint: false,
  },
  provider_key: { ...WRITES, openWorldHint: false },
  usage: { ...READS, openWorldHint: false },
};

describe('the MCP server over stdio', () => {
  it('lists its tools with all four annotations, within the size budget', async () => {
    server = await startServer(world.env);
    const { tools: listed } = await server.client.listTools();
    // hook_answer is for Claude Code's hooks alone: listed for the app, never to the model, so
    // it costs no context (test/integration/hook-answer-tool.test.ts).
    expect(listed.at(-1)?.name).toBe('hook_answer');
    const tools = listed.filter((tool) => tool.name !== 'hook_answer');
    expect(tools.map((tool) => tool.name)).toEqual(Object.keys(EXPECTED_ANNOTATIONS));
    for (const tool of tools) {
      expect(tool.annotations).toMatchObject(
        EXPECTED_ANNOTATIONS[tool.name as keyof typeof EXPECTED_ANNOTATIONS],
      );
      expect(tool.description!.length).toBeLessThanOrEqual(1024);
      expect(tool.title).toBeTruthy();
      const properties = Object.values(
        (tool.inputSchema.properties ?? {}) as Record<string, { description?: string }>,
      );
      for (const property of properties) expect(property.description).toBeTruthy();
    }
    // The bar of issue 30 (explore added): every session pays these characters of context.
    expect(JSON.stringify({ tools }).length).toBeLessThanOrEqual(14_500);
  });

  it('writes nothing but JSON-RPC to stdout, even on errors, and exits cleanly when stdin closes', async () => {
    child = spawn(process.execPath, [SERVER_BUNDLE], { env: world.env, stdio: 'pipe' });
    const lines: string[] = [];
    let buffered = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const parts = buffered.split('\n');
      buffered = parts.pop() ?? '';
      lines.push(...parts.filter((line) => line.trim()));
    });
    const send = (message: unknown) => child!.stdin.write(`${JSON.stringify(message)}\n`);
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'raw', version: '1' },
      },
    });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    send({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'delegate', arguments: { task: 'x', files: ['/etc/passwd'] } },
    });
    send({
      jsonrpc: '2.0',
      id: 4,
      method: 'tools/call',
      params: { name: 'providers', arguments: { check: true } },
    });
    send({
      jsonrpc: '2.0',
      id: 5,
      method: 'tools/call',
      params: { name: 'no_such_tool', arguments: {} },
    });
    await waitFor(() => lines.length >= 5);
    child.stdin.end();
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(0);
    const messages = lines.map((line) => JSON.parse(line) as { jsonrpc: string; id: number });
    expect(messages.every((message) => message.jsonrpc === '2.0')).toBe(true);
    expect(messages.map((message) => message.id).sort()).toEqual([1, 2, 3, 4, 5]);
  });

  it('exits on SIGTERM', async () => {
    child = spawn(process.execPath, [SERVER_BUNDLE], { env: world.env, stdio: 'pipe' });
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })}\n`,
    );
    await once(child.stdout, 'data');
    child.kill('SIGTERM');
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(0);
  });
});
