import { SERVER_NAME } from './server.ts';

/**
 * Results in the shape protocol 2026-07-28 requires, for what the SDK 1.32 server (2025 era)
 * answered or the dual-era wrapper answers itself (`dual-era.ts`).
 */

const SERVER_INFO_KEY = 'io.modelcontextprotocol/serverInfo';
/** Claude Code's vendor key for the text its model reads when a call becomes a task. */
const AGENT_TASK_KEY = 'com.anthropic/agent-task';

/**
 * How long a client may keep a listing (`CacheableResult`): not at all, as `server/discover`
 * says too. The tools do not change while a server runs, but a plugin update starts a new one
 * under the same name, and a client that kept the old list would call tools that are gone.
 */
export const CACHE_HINT = { ttlMs: 0, cacheScope: 'private' } as const;

/**
 * `result` with `resultType` and the server's name in `_meta`; for `tools/list` also the cache
 * hint the era requires, and tools without `execution`: the 2026 core schema has no such field
 * (the 2025 `taskSupport` it held is gone), and there any tool call from a client that declares
 * the tasks extension may come back as a task, which this server does for `task_start`,
 * `delegate`, `delegate_batch`, `explore` and `provider_key`.
 */
export function modernResult(
  result: Record<string, unknown>,
  version: string,
  method?: string,
): Record<string, unknown> {
  const meta = (result._meta ?? {}) as Record<string, unknown>;
  return {
    resultType: 'complete',
    ...result,
    ...(method === 'tools/list' ? modernToolList(result) : {}),
    _meta: { ...meta, [SERVER_INFO_KEY]: { name: SERVER_NAME, version } },
  };
}

function modernToolList(result: Record<string, unknown>): Record<string, unknown> {
  const tools = (result.tools ?? []) as Array<Record<string, unknown>>;
  return {
    ...CACHE_HINT,
    tools: tools.map(({ execution: _legacyOnly, ...tool }) => tool),
  };
}

/** A `CreateTaskResult`, with the text Claude Code gives its model about the new task. */
export function asTask(task: object, text: string): Record<string, unknown> {
  return {
    ...task,
    resultType: 'task',
    _meta: { [AGENT_TASK_KEY]: { modelImmediateResponse: text } },
  };
}
