import { cpSync, mkdirSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import type { RecordedRequest } from './fake-provider.ts';
import { REPO_ROOT } from './mcp-server.ts';

/** Full name under which Claude Code shows one of our tools to the model. */
export const toolName = (tool: string) => `mcp__plugin_delegate_workers__${tool}`;

/** The text of every tool_result a supervisor request carries, by tool_use id. */
export function toolResults(
  request: RecordedRequest,
): Map<string, { text: string; isError: boolean }> {
  const results = new Map<string, { text: string; isError: boolean }>();
  for (const message of request.body?.messages ?? []) {
    if (!Array.isArray(message.content)) continue;
    for (const block of message.content) {
      if (block.type !== 'tool_result') continue;
      const text =
        typeof block.content === 'string'
          ? block.content
          : (block.content ?? []).map((part: { text?: string }) => part.text ?? '').join('');
      results.set(block.tool_use_id, { text, isError: block.is_error === true });
    }
  }
  return results;
}

/**
 * A copy of the checkout as `git clone` would give it (tracked and untracked-but-not-ignored
 * files), so an install test sees what users get, without node_modules or .cache.
 */
export function copyCheckout(target: string): string {
  const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
  })
    .split('\0')
    .filter(Boolean);
  for (const file of files) {
    mkdirSync(dirname(join(target, file)), { recursive: true });
    cpSync(join(REPO_ROOT, file), join(target, file));
  }
  return target;
}
