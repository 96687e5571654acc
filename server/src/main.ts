import { fileURLToPath } from 'node:url';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { resolveDataHome, resolveProjectDir } from './config/paths.ts';
import { resolvePluginRoot } from './config/plugin-root.ts';
import { createServer } from './server.ts';
import { TOOLS } from './tools/registry.ts';
import { VERSION } from './util/version.ts';

/** The composition root of the MCP server: environment → context → server → stdio. */
async function main(): Promise<void> {
  const env = process.env;
  const log = (message: string) => process.stderr.write(`[delegate] ${message}\n`);
  const server = createServer({
    context: {
      env,
      projectDir: resolveProjectDir(env, process.cwd()),
      dataHome: resolveDataHome(env),
      now: () => new Date(),
      pluginRoot: resolvePluginRoot(env, import.meta.url),
      workerScript: fileURLToPath(new URL('./task-worker.mjs', import.meta.url)),
      learned: new Map(),
    },
    tools: TOOLS,
    loadServices: () => import('./tools/services.ts'),
    version: VERSION,
    log,
  });
  const transport = new StdioServerTransport();
  let closing = false;
  const shutdown = () => {
    if (closing) return;
    closing = true;
    void server.close().finally(() => process.exit(0));
  };
  // The client closing our stdin is the normal end of a session.
  process.stdin.on('end', shutdown);
  process.stdin.on('close', shutdown);
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
  await server.connect(transport);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `[delegate] server failed to start: ${(error as Error).stack ?? String(error)}\n`,
  );
  process.exit(1);
});
