import type { AppContext } from '../../server/src/profiles/app-context.ts';
import { PLUGIN_ROOT } from './mcp-server.ts';
import type { TempEnv } from './temp-env.ts';

/** An app context for in-process tests (this checkout is the plugin root): the temp world's data home and project, no discovery. */
export function appContext(world: TempEnv, env: Record<string, string> = {}): AppContext {
  return {
    env: { ...world.env, ...env },
    projectDir: world.project,
    dataHome: world.dataHome,
    now: () => new Date(),
    pluginRoot: PLUGIN_ROOT,
    discover: () => Promise.resolve(undefined),
  };
}

/** Short timeouts and backoff, so fault tests take milliseconds, not minutes. */
export const FAST_CALLS = { idleTimeoutMs: 400, retry: { baseDelayMs: 10, maxDelayMs: 40 } };
