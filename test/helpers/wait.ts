import type { ServerHandle } from './mcp-server.ts';
import { scaledMs } from './timing.ts';

/** Polls `condition` every few milliseconds until it holds; throws after `timeoutMs` (scaled). */
export async function waitFor(
  condition: () => boolean,
  timeoutMs = 10_000,
  everyMs = 20,
): Promise<void> {
  const windowMs = scaledMs(timeoutMs);
  const deadline = Date.now() + windowMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${windowMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** Polls task_status for one task until its line matches `pattern` (within `timeoutMs`, scaled); returns that line. */
export async function pollTaskStatus(
  handle: ServerHandle,
  id: string,
  pattern: RegExp,
  timeoutMs = 30_000,
): Promise<string> {
  return pollTool(handle, 'task_status', { task_ids: [id] }, pattern, timeoutMs);
}

/** Calls one tool every 100 ms until its text matches `pattern` (within `timeoutMs`, scaled); returns that text. */
export async function pollTool(
  handle: ServerHandle,
  tool: string,
  args: Record<string, unknown>,
  pattern: RegExp,
  timeoutMs = 30_000,
): Promise<string> {
  const deadline = Date.now() + scaledMs(timeoutMs);
  for (;;) {
    const { text } = await handle.callText(tool, args);
    if (pattern.test(text)) return text;
    if (Date.now() > deadline)
      throw new Error(`${tool} ${JSON.stringify(args)} never matched ${pattern}; last: ${text}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The task id a tool result names (ids look like t_ab12cd). */
export function taskIdOf(text: string): string {
  const id = /\bt_[a-z0-9]{6}\b/.exec(text)?.[0];
  if (!id) throw new Error(`no task id in: ${text}`);
  return id;
}
