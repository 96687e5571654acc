/**
 * Every malformed request gets a JSON-RPC error with a short message, in both protocol eras, over
 * the built server's real stdio: never silence, never a schema dump. And 2025-era task metadata
 * is ignored, as the spec asks of a server that declared no tasks.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MODERN_META, startRawServer, type RawLines, type Reply } from '../helpers/raw-lines.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';

let world: TempEnv;
let server: RawLines | undefined;

beforeEach(() => {
  world = createTempEnv();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  world.cleanup();
});

type Era = 'legacy' | 'modern';
type Meta = Record<string, unknown> | undefined;

/** A request with params carrying this era's `_meta` (none in the legacy era). */
const params = (meta: Meta, fields: Record<string, unknown>) =>
  meta ? { ...fields, _meta: { ...meta, ...((fields._meta as object) ?? {}) } } : fields;

interface Row {
  name: string;
  /** The message for request `id` in the era whose per-request `_meta` is `meta`. */
  message(id: number, meta: Meta): unknown;
  code: -32600 | -32602;
  /** A word the error message must name. */
  names: string;
}

const request = (id: number, method: string, rest: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id,
  method,
  ...rest,
});

const ROWS: Row[] = [
  ...['tasks/get', 'tools/list', 'tools/call', 'ping'].flatMap((method): Row[] => [
    {
      name: `${method}, params null`,
      message: (id) => request(id, method, { params: null }),
      code: -32600,
      names: 'params',
    },
    {
      name: `${method}, params an array`,
      message: (id) => request(id, method, { params: [1, 2] }),
      code: -32602,
      names: 'array',
    },
    {
      name: `${method}, _meta a string`,
      message: (id) => request(id, method, { params: { taskId: 't_aaaaaa', _meta: 'x' } }),
      code: -32602,
      names: '_meta',
    },
    {
      name: `${method}, params a string`,
      message: (id) => request(id, method, { params: 'text' }),
      code: -32600,
      names: 'params',
    },
  ]),
  ...(
    [
      ['tools/call', {}, 'name'],
      ['tools/call', { name: 5 }, 'name'],
      ['tools/call', { name: 'providers', arguments: 'x' }, 'arguments'],
      ['tools/list', { cursor: 5 }, 'cursor'],
      ['tasks/get', {}, 'taskId'],
      ['tasks/get', { taskId: 5 }, 'taskId'],
      ['tasks/update', { taskId: 't_aaaaaa' }, 'inputResponses'],
      ['tasks/update', { taskId: 't_aaaaaa', inputResponses: { k: 'yes' } }, 'inputResponses'],
      ['tasks/cancel', { taskId: null }, 'taskId'],
      ['ping', { _meta: { progressToken: {} } }, 'progressToken'],
    ] as const
  ).map(([method, fields, names]): Row => ({
    name: `${method} ${JSON.stringify(fields)}`,
    message: (id, meta) => request(id, method, { params: params(meta, fields) }),
    code: -32602,
    names,
  })),
  {
    name: 'no jsonrpc member',
    message: (id, meta) => ({ id, method: 'tools/list', params: params(meta, {}) }),
    code: -32600,
    names: 'jsonrpc',
  },
  {
    name: 'method a number',
    message: (id) => ({ jsonrpc: '2.0', id, method: 5 }),
    code: -32600,
    names: 'method',
  },
];

/** Lines no id can be read from: answered with `id: null`. */
const ID_LESS: Array<[string, unknown, number]> = [
  ['not JSON', '{"jsonrpc":"2.0","id":1,', -32700],
  ['a batch', [{ jsonrpc: '2.0', id: 1, method: 'ping' }], -32600],
  ['id null', { jsonrpc: '2.0', id: null, method: 'ping' }, -32600],
  ['id a fraction', { jsonrpc: '2.0', id: 1.5, method: 'ping' }, -32600],
  ['a number', 42, -32600],
];

function expectShortError(reply: Reply, code: number, names: string): void {
  expect(reply.result).toBeUndefined();
  expect(reply.error?.code).toBe(code);
  const text = reply.error!.message;
  expect(text).toContain(names);
  // Readable: one short line, no schema dump.
  expect(text.length).toBeLessThanOrEqual(160);
  expect(text).not.toMatch(/[{\n]/);
}

/** A server in `era`: the legacy one has had its handshake (after a malformed initialize). */
async function startInEra(era: Era): Promise<{ server: RawLines; meta: Meta }> {
  server = startRawServer(world.env, world.project);
  if (era === 'modern') return { server, meta: MODERN_META };
  const client = { capabilities: {}, clientInfo: { name: 'raw', version: '1' } };
  expectShortError(
    await server.request(900, 'initialize', { protocolVersion: '2025-11-25', capabilities: {} }),
    -32602,
    'clientInfo',
  );
  const init = await server.request(901, 'initialize', {
    protocolVersion: '2025-11-25',
    ...client,
  });
  expect(init.result?.protocolVersion).toBe('2025-11-25');
  server.write({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return { server, meta: undefined };
}

describe.each<Era>(['legacy', 'modern'])('malformed requests, %s era', (era) => {
  it('each gets -32600 or -32602 with a short message naming the fault; the server goes on', async () => {
    const { server, meta } = await startInEra(era);
    for (const [index, row] of ROWS.entries()) {
      server.write(row.message(index + 1, meta));
    }
    for (const [index, row] of ROWS.entries()) {
      const reply = await server.reply(index + 1);
      expect.soft(reply.error?.code, row.name).toBe(row.code);
      expectShortError(reply, row.code, row.names);
    }
    for (const [name, line, code] of ID_LESS) {
      server.write(typeof line === 'string' ? line : JSON.stringify(line));
      const reply = await server.reply(null);
      expect.soft(reply.error?.code, name).toBe(code);
    }
    // A malformed notification cannot be answered: nothing comes back, and nothing breaks.
    server.write({ jsonrpc: '2.0', method: 'notifications/cancelled', params: null });
    const list = await server.request(999, 'tools/list', params(meta, {}));
    expect((list.result?.tools as unknown[]).length).toBeGreaterThan(0);
    const replies = server.lines.map((line) => JSON.parse(line) as Reply);
    expect(replies.every((reply) => reply.jsonrpc === '2.0')).toBe(true);
    expect(replies.length).toBe(ROWS.length + ID_LESS.length + (era === 'legacy' ? 3 : 1));
  });

  it('a tools/call with 2025-era task metadata is served as a plain call', async () => {
    const { server, meta } = await startInEra(era);
    const reply = await server.request(
      1,
      'tools/call',
      params(meta, { name: 'providers', arguments: {}, task: { ttl: 60_000 } }),
    );
    expect(reply.error).toBeUndefined();
    expect(reply.result).not.toHaveProperty('taskId');
    expect(reply.result?.content?.[0]?.text).toContain('No worker is configured');
  });
});
