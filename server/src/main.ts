import { fileURLToPath } from 'node:url';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { resolveDataHome, resolveProjectDir } from './config/paths.ts';
import { resolvePluginRoot } from './config/plugin-root.ts';
import { dualEraTransport } from './dual-era.ts';
import { createServer, INSTRUCTIONS, once } from './server.ts';
import { createTaskDoor } from './tools/task-door.ts';
import { TOOLS } from './tools/registry.ts';
import { VERSION } from './util/version.ts';

/** The composition root of the MCP server: environment → context → server → stdio. */
async function main(): Promise<void> {
  const env = process.env;
  const log = (message: string) => process.stderr.write(`[delegate] ${message}\n`);
  const context = {
    env,
    projectDir: resolveProjectDir(env, process.cwd()),
    dataHome: resolveDataHome(env),
    now: () => new Date(),
    pluginRoot: resolvePluginRoot(env, import.meta.url),
    workerScript: fileURLToPath(new URL('./task-worker.mjs', import.meta.url)),
    learned: new Map(),
  };
  const loadServices = once(() => import('./tools/services.ts'));
  const server = createServer({ context, tools: TOOLS, loadServices, version: VERSION, log });
  // Both protocol eras: legacy clients reach the SDK unchanged, modern ones get native tasks.
  const transport = dualEraTransport(new StdioServerTransport(), {
    context,
    log,
    version: VERSION,
    instructions: INSTRUCTIONS,
    door: createTaskDoor({
      context,
      services: loadServices,
      pollIntervalMs: pollInterval(env.DELEGATE_TASK_POLL_MS),
    }),
  });
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

/** Claude Code's poll period for native tasks: 2 s, or the env's value (tests poll faster). */
function pollInterval(value: string | undefined): number {
  const ms = Number(value);
  return Number.isInteger(ms) && ms > 0 ? ms : 2000;
}

main().catch((error: unknown) => {
  process.stderr.write(
    `[delegate] server failed to start: ${(error as Error).stack ?? String(error)}\n`,
  );
  process.exit(1);
});
