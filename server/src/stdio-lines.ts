import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/**
 * The stdio transport, one JSON value a line, handed on as parsed and not yet checked. The SDK's
 * own stdio transport drops a line that fails its schema (a request with `params: null`, say)
 * and only tells `onerror`, so the client waits forever; here every line reaches the dual-era
 * wrapper, which answers the malformed ones (`request-check.ts`). A line that is not JSON is
 * answered here: -32700, as JSON-RPC asks.
 */

/** As the SDK's: a line longer than this ends the connection. */
const MAX_BUFFER_BYTES = 10 * 1024 * 1024;
const PARSE_ERROR = -32700;

export function stdioLines(
  input: Readable = process.stdin,
  output: Writable = process.stdout,
): Transport {
  let buffer = Buffer.alloc(0);
  const transport: Transport = {
    start: () => {
      input.on('data', onData);
      input.on('error', onError);
      return Promise.resolve();
    },
    close: () => {
      input.off('data', onData);
      input.off('error', onError);
      if (input.listenerCount('data') === 0) input.pause();
      buffer = Buffer.alloc(0);
      transport.onclose?.();
      return Promise.resolve();
    },
    send: (message: JSONRPCMessage) =>
      new Promise<void>((resolve) => {
        if (output.write(`${JSON.stringify(message)}\n`)) resolve();
        else output.once('drain', resolve);
      }),
  };

  function onError(error: Error): void {
    transport.onerror?.(error);
  }

  function onData(chunk: Buffer): void {
    if (buffer.length + chunk.length > MAX_BUFFER_BYTES) {
      transport.onerror?.(new Error(`a stdin line exceeds ${MAX_BUFFER_BYTES} bytes`));
      void transport.close();
      return;
    }
    buffer = Buffer.concat([buffer, chunk]);
    for (let end = buffer.indexOf('\n'); end !== -1; end = buffer.indexOf('\n')) {
      const line = buffer.toString('utf8', 0, end).replace(/\r$/, '');
      buffer = buffer.subarray(end + 1);
      if (line.trim() !== '') deliver(line);
    }
  }

  function deliver(line: string): void {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      void transport.send({
        jsonrpc: '2.0',
        id: null,
        error: { code: PARSE_ERROR, message: 'Parse error: the line is not JSON' },
      } as unknown as JSONRPCMessage);
      return;
    }
    // Unchecked on purpose: the dual-era wrapper checks it, and answers what is malformed.
    transport.onmessage?.(value as JSONRPCMessage);
  }

  return transport;
}
