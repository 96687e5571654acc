import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { join } from 'node:path';

export const REPO_ROOT = join(import.meta.dirname, '..', '..');
/** The plugin itself (what `claude plugin install` copies): a folder of the repository. */
export const PLUGIN_ROOT = join(REPO_ROOT, 'plugin');
export const SERVER_BUNDLE = join(PLUGIN_ROOT, 'dist', 'server.mjs');

export interface ServerHandle {
  client: Client;
  /** The server process id. */
  pid: number | null;
  /** Everything the server wrote to stderr so far. */
  stderr(): string;
  call(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
  /** Text of the first content block. */
  callText(
    name: string,
    args: Record<string, unknown>,
  ): Promise<{ text: string; isError: boolean }>;
  close(): Promise<void>;
}

/** Spawns the built server over real stdio with the SDK client. */
export async function startServer(
  env: Record<string, string>,
  cwd?: string,
): Promise<ServerHandle> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [SERVER_BUNDLE],
    env,
    ...(cwd ? { cwd } : {}),
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: 'delegate-test', version: '1.0.0' });
  await client.connect(transport);
  const call = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as CallToolResult;
  return {
    client,
    pid: transport.pid,
    stderr: () => stderr,
    call,
    callText: async (name, args) => {
      const result = await call(name, args);
      const first = result.content[0];
      return { text: first?.type === 'text' ? first.text : '', isError: result.isError === true };
    },
    close: () => client.close(),
  };
}
