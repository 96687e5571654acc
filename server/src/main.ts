import { fileURLToPath } from 'node:url';
import { resolveDataHome, resolveProjectDir } from './config/paths.ts';
import { resolvePluginRoot } from './config/plugin-root.ts';
import { createCallTasks } from './call-tasks.ts';
import { dualEraTransport } from './dual-era.ts';
import { createServer, INSTRUCTIONS, once } from './server.ts';
import { stdioLines } from './stdio-lines.ts';
import { markHookServer } from './hook-server-mark.ts';
import { hookAnswerTool } from './tools/hook-answer.ts';
import { listedAtBuild } from './tools/listed-at-build.ts';
import { createTaskDoor } from './tools/task-door.ts';
import { TOOLS } from './tools/registry.ts';
import { VERSION } from './util/version.ts';

/** The composition root of the MCP server: environment → context → server → stdio. */
async function main(): Promise<void> {
  const env = process.env;
  // Lets tests see what Claude Code does with a plugin server that failed to start.
  if (env.DELEGATE_SERVER_EXIT_FOR_TEST === '1') process.exit(1);
  const log = (message: string) => process.stderr.write(`[delegate] ${message}\n`);
  const context = {
    env,
    projectDir: resolveProjectDir(env, process.cwd()),
    dataHome: resolveDataHome(env),
    now: () => new Date(),
    pluginRoot: resolvePluginRoot(env, import.meta.url),
    workerScript: fileURLToPath(new URL('./task-worker.mjs', import.meta.url)),
    learned: new Map(),
    keepsTaskHost: true,
  };
  const loadServices = once(() => import('./tools/services.ts'));
  const server = createServer({
    context,
    tools: TOOLS,
    hookTools: [hookAnswerTool],
    loadServices,
    version: VERSION,
    toolsList: listedAtBuild(new URL('./tools-list.json', import.meta.url)),
    log,
  });
  // Both protocol eras: legacy clients reach the SDK unchanged, modern ones get native tasks.
  const pollIntervalMs = milliseconds(env.DELEGATE_TASK_POLL_MS, 2000);
  const transport = dualEraTransport(stdioLines(), {
    context,
    log,
    version: VERSION,
    instructions: INSTRUCTIONS,
    door: createTaskDoor({ context, services: loadServices, pollIntervalMs }),
    calls: createCallTasks({
      context,
      log,
      services: loadServices,
      pollIntervalMs,
      afterMs: milliseconds(env.DELEGATE_CALL_TASK_AFTER_MS, 5000),
    }),
    tools: TOOLS,
  });
  let closing = false;
  let unmark: () => void = () => undefined;
  process.on('exit', () => unmark());
  const shutdown = () => {
    if (closing) return;
    closing = true;
    unmark();
    void server.close().finally(() => process.exit(0));
  };
  // The client closing our stdin is the normal end of a session.
  process.stdin.on('end', shutdown);
  process.stdin.on('close', shutdown);
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
  await server.connect(transport);
  unmark = markHookServer(context.dataHome, process.ppid, process.pid);
}

/**
 * A period of the native tasks from the env, else its default: Claude Code's poll period
 * (`DELEGATE_TASK_POLL_MS`, 2 s) and how long a delegate or provider_key call runs before it
 * becomes a task (`DELEGATE_CALL_TASK_AFTER_MS`, 5 s). Tests set them shorter.
 */
function milliseconds(value: string | undefined, fallback: number): number {
  const ms = Number(value);
  return value !== undefined && Number.isInteger(ms) && ms >= 0 ? ms : fallback;
}

main().catch((error: unknown) => {
  process.stderr.write(
    `[delegate] server failed to start: ${(error as Error).stack ?? String(error)}\n`,
  );
  process.exit(1);
});
