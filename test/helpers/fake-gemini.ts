// A scripted fake of the Gemini API (`POST /v1beta/models/<model>:streamGenerateContent?alt=sse`)
// on 127.0.0.1, for the real Gemini CLI pointed at it with GOOGLE_GEMINI_BASE_URL. Records every
// request; replies by the number of function responses already in the conversation.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type GeminiReply =
  | { text: string }
  | { call: { name: string; args: Record<string, unknown> } }
  | { error: number; status: string; message: string };

export interface GeminiRequest {
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
}

export interface FakeGemini {
  url: string;
  requests: GeminiRequest[];
  close(): Promise<void>;
}

export async function startFakeGemini(steps: GeminiReply[]): Promise<FakeGemini> {
  const requests: GeminiRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (raw += chunk));
    req.on('end', () => {
      let body: any;
      try {
        body = JSON.parse(raw);
      } catch {
        body = undefined;
      }
      requests.push({ path: req.url ?? '', headers: req.headers, body });
      if (!/:streamGenerateContent/.test(req.url ?? '')) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ error: { code: 404, message: 'fake: no route', status: 'NOT_FOUND' } }),
        );
        return;
      }
      const turn = (JSON.stringify(body?.contents ?? []).match(/"functionResponse"/g) ?? []).length;
      const step = steps[Math.min(turn, steps.length - 1)]!;
      if ('error' in step) {
        res.writeHead(step.error, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            error: { code: step.error, message: step.message, status: step.status },
          }),
        );
        return;
      }
      const parts = 'text' in step ? [{ text: step.text }] : [{ functionCall: step.call }];
      const chunk = {
        candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
        usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
        modelVersion: body?.model ?? 'fake',
      };
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`data: ${JSON.stringify(chunk)}\n\n`);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}
