// The built server over stdio, written to line by line as raw text: for requests no SDK client
// would send (malformed ones), and the modern era's shapes exactly as a test writes them.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { SERVER_BUNDLE } from './mcp-server.ts';
import { scaledMs } from './timing.ts';

export const MODERN = '2026-07-28';
export const TASKS = 'io.modelcontextprotocol/tasks';

/** A modern client's per-request `_meta`, declaring the tasks extension. */
export const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'raw-test', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } },
};

export interface Reply {
  jsonrpc: string;
  id: string | number | null;
  result?: Record<string, any>;
  error?: { code: number; message: string; data?: unknown };
}

export interface RawLines {
  child: ChildProcessWithoutNullStreams;
  /** Every stdout line so far. */
  lines: string[];
  /** Writes `message` (a string as it is, anything else as JSON) and one newline. */
  write(message: unknown): void;
  /** The reply with this id (`null`: the next reply with a null id). */
  reply(id: string | number | null): Promise<Reply>;
  /** Writes a request and waits for its reply. */
  request(id: string | number, method: string, params?: unknown): Promise<Reply>;
  close(): Promise<void>;
}

export function startRawServer(env: Record<string, string>, cwd?: string): RawLines {
  const child = spawn(process.execPath, [SERVER_BUNDLE], { env, ...(cwd ? { cwd } : {}) });
  child.stderr.resume();
  const lines: string[] = [];
  const replies: Reply[] = [];
  const waiting: Array<() => void> = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(line);
    const message = JSON.parse(line) as Reply & { method?: string };
    if (message.method !== undefined) return;
    replies.push(message);
    for (const wake of waiting.splice(0)) wake();
  });
  const write = (message: unknown) =>
    child.stdin.write(`${typeof message === 'string' ? message : JSON.stringify(message)}\n`);
  const reply = async (id: string | number | null): Promise<Reply> => {
    const deadline = Date.now() + scaledMs(15_000);
    for (;;) {
      const index = replies.findIndex((one) => one.id === id);
      if (index !== -1) return replies.splice(index, 1)[0]!;
      if (Date.now() > deadline) throw new Error(`no reply with id ${String(id)}`);
      await new Promise<void>((resolve) => {
        waiting.push(resolve);
        setTimeout(resolve, 100);
      });
    }
  };
  return {
    child,
    lines,
    write,
    reply,
    request: (id, method, params) => {
      write({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
      return reply(id);
    },
    close: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), scaledMs(5_000));
      await exited;
      clearTimeout(timer);
    },
  };
}
