// The built MCP server's own `tools/list` answer, as sent on the wire: the build keeps it as
// plugin/dist/tools-list.json (server/src/tools/listed-at-build.ts), and the docs' tools table is
// generated from it (readme-tools.mjs).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/** The `tools/list` result of the server bundle at `serverPath`, started with an empty private home. */
export async function toolsListOf(serverPath) {
  if (!existsSync(serverPath)) throw new Error(`${serverPath} is missing: run \`npm run build\`.`);
  const home = mkdtempSync(join(tmpdir(), 'delegate-tools-list-'));
  const server = spawn(process.execPath, [serverPath], {
    cwd: home,
    env: { PATH: process.env.PATH ?? '', HOME: home, DELEGATE_HOME: join(home, 'data') },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  try {
    const send = (message) =>
      server.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
    send({
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'delegate-scripts', version: '1.0.0' },
      },
    });
    send({ method: 'notifications/initialized' });
    send({ id: 2, method: 'tools/list' });
    for await (const line of createInterface({ input: server.stdout })) {
      const message = JSON.parse(line);
      if (message.id !== 2) continue;
      if (!message.result) throw new Error(`tools/list failed: ${line}`);
      return message.result;
    }
    throw new Error(`${serverPath} ended without answering tools/list.`);
  } finally {
    server.stdin.end();
    if (server.exitCode === null && server.signalCode === null) await once(server, 'exit');
    rmSync(home, { recursive: true, force: true });
  }
}
