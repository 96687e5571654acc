/**
 * The task world for integration suites, as vitest fixtures: `world` (a private temp env whose
 * project is a git repository of `repository`), `provider` (the scripted fake providers a test
 * starts), `server` (the MCP servers it starts over stdio) and `cli` (long-running CLI
 * processes). Whatever a test starts is ended after it, in the order that leaves nothing
 * behind: the CLI processes and the servers (their tasks cancelled first, so no new worker
 * starts), the task workers (they may still be salvaging), the fake providers they called, then
 * the temp dirs.
 *
 * A suite adds its own start-up helper as a fixture (`taskTest.extend('startWith', …)`), and
 * one that needs no repository says `it.override('repository', null)`.
 */
import { test } from 'vitest';
import { startFakeProvider, type FakeProvider, type FakeProviderOptions } from './fake-provider.ts';
import { BROKEN_ADD_PROJECT, initRepository } from './git-project.ts';
import { startCli, type CliProcess } from './cli-process.ts';
import { startServer, type ServerHandle } from './mcp-server.ts';
import { killQuietly, settleWorkers } from './processes.ts';
import { createTempEnv, type TempEnv } from './temp-env.ts';

/** The fake providers of one test, all closed after it. */
export interface ProviderLauncher {
  start(options?: FakeProviderOptions): Promise<FakeProvider>;
  /** The provider started last; undefined before the test starts one. */
  readonly started: FakeProvider | undefined;
}

/** The MCP servers of one test (the built bundle over stdio), all stopped after it. */
export interface ServerLauncher {
  /** Starts a server with `env` (default: the world's env). */
  start(env?: Record<string, string>, cwd?: string): Promise<ServerHandle>;
}

/** The long-running CLI processes of one test (`delegate wait`, `watch`…), all stopped after it. */
export interface CliLauncher {
  /** Starts the built CLI with `args`; by default in the world's project with the world's env. */
  start(
    args: string[],
    options?: { env?: Record<string, string>; cwd?: string; command?: string[] },
  ): CliProcess;
}

/** The three fixtures a suite's start-up helper takes. */
export interface TaskWorld {
  world: TempEnv;
  provider: ProviderLauncher;
  server: ServerLauncher;
}

/** Task ids a server still lists: they are cancelled before it stops. */
const TASK_ID = /t_[a-z0-9]+/g;

async function stopServer(server: ServerHandle): Promise<void> {
  const status = await server.callText('task_status', {}).catch(() => ({ text: '' }));
  for (const id of status.text.match(TASK_ID) ?? [])
    await server.callText('task_cancel', { task_id: id }).catch(() => undefined);
  await server.close().catch(() => undefined);
  if (server.pid) killQuietly(server.pid);
}

export const taskTest = test
  /** The files of the git project in `world.project`; null for a folder that is no repository. */
  .extend('repository', BROKEN_ADD_PROJECT as Record<string, string> | null)
  .extend('world', ({ repository }, { onCleanup }): TempEnv => {
    const world = createTempEnv();
    onCleanup(async () => {
      await settleWorkers(world.dataHome);
      world.cleanup();
    });
    if (repository) initRepository(world.project, repository);
    return world;
  })
  .extend('provider', ({ world }, { onCleanup }): ProviderLauncher => {
    const providers: FakeProvider[] = [];
    onCleanup(async () => {
      await settleWorkers(world.dataHome);
      for (const provider of providers) await provider.close();
    });
    return {
      async start(options) {
        const provider = await startFakeProvider(options);
        providers.push(provider);
        return provider;
      },
      get started() {
        return providers.at(-1);
      },
    };
  })
  // Depending on `provider` makes vitest stop the servers before it closes the providers.
  .extend('server', ({ world, provider: _provider }, { onCleanup }): ServerLauncher => {
    const servers: ServerHandle[] = [];
    onCleanup(async () => {
      for (const server of servers) await stopServer(server);
      await settleWorkers(world.dataHome);
    });
    return {
      async start(env = world.env, cwd) {
        const server = await startServer(env, cwd);
        servers.push(server);
        return server;
      },
    };
  })
  .extend('cli', ({ world }, { onCleanup }): CliLauncher => {
    const running: CliProcess[] = [];
    onCleanup(async () => {
      await Promise.all(running.map((process) => process.stop()));
    });
    return {
      start(args, options = {}) {
        const started = startCli(args, {
          env: options.env ?? world.env,
          cwd: options.cwd ?? world.project,
          ...(options.command ? { command: options.command } : {}),
        });
        running.push(started);
        return started;
      },
    };
  });
