import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getJson, postStream } from '../../server/src/wire/http-stream.ts';

// A reply may come compressed (a gateway behind a proxy that compresses whatever it sends):
// each encoding a client may meet, on a JSON reply and on an SSE stream, at a real server.
const ENCODINGS: Array<[encoding: string, compress: (body: Buffer) => Buffer]> = [
  ['gzip', gzipSync],
  ['x-gzip', gzipSync],
  ['deflate', deflateSync],
  ['br', brotliCompressSync],
  ['identity', (body) => body],
  ['', (body) => body],
];

const JSON_BODY = { answer: 'a reply that came compressed', n: 42 };
const SSE_BODY = 'data: {"part":1}\n\ndata: {"part":2}\n\ndata: [DONE]\n\n';

let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer((request, response) => {
    const [, kind, encoding = ''] = /^\/(json|sse)\/?(.*)$/.exec(request.url ?? '') ?? [];
    const compress = ENCODINGS.find(([name]) => name === encoding)?.[1] ?? ((body) => body);
    const text = kind === 'json' ? JSON.stringify(JSON_BODY) : SSE_BODY;
    request.resume();
    response.writeHead(200, {
      'content-type': kind === 'json' ? 'application/json' : 'text/event-stream',
      ...(encoding ? { 'content-encoding': encoding } : {}),
    });
    const body = compress(Buffer.from(text));
    // The stream in two pieces, as a network delivers it.
    response.write(body.subarray(0, Math.floor(body.length / 2)));
    setTimeout(() => response.end(body.subarray(Math.floor(body.length / 2))), 5);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('a compressed reply is read as sent', () => {
  it.each(ENCODINGS)('JSON, content-encoding "%s"', async (encoding) => {
    expect(await getJson(`${base}/json/${encoding}`, {}, 5_000)).toEqual(JSON_BODY);
  });

  it.each(ENCODINGS)('SSE stream, content-encoding "%s"', async (encoding) => {
    const events: string[] = [];
    await postStream(
      `${base}/sse/${encoding}`,
      { headers: {}, body: { stream: true } },
      {},
      { onEvent: (event) => events.push(event.data), onJson: () => undefined },
    );
    expect(events).toEqual(['{"part":1}', '{"part":2}', '[DONE]']);
  });
});
