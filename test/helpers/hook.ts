import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { PLUGIN_ROOT } from './mcp-server.ts';
import { scaledMs } from './timing.ts';

export interface HookRun {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed, when it is JSON. */
  json: any;
}

/**
 * Runs a hook with `stdin` exactly as Claude Code would send it: a built bundle with this Node,
 * or the PostToolUse shell entry (hooks/post-tool-use.sh) as hooks.json runs it.
 */
export function runHook(
  bundle: 'pre-tool-use' | 'session-start' | 'post-tool-use.sh',
  stdin: string,
  env: Record<string, string>,
): HookRun {
  const [command, args] = bundle.endsWith('.sh')
    ? ['sh', [join(PLUGIN_ROOT, 'hooks', bundle)]]
    : [process.execPath, [join(PLUGIN_ROOT, 'dist', `${bundle}.cjs`)]];
  const result = spawnSync(command, args, {
    input: stdin,
    env,
    encoding: 'utf8',
    timeout: scaledMs(10_000),
  });
  let json: unknown;
  try {
    json = result.stdout ? JSON.parse(result.stdout) : undefined;
  } catch {
    json = undefined;
  }
  return { exitCode: result.status, stdout: result.stdout, stderr: result.stderr, json };
}

/** What Claude Code sends a tool hook on stdin: the session fields, then the event's own. */
function toolHookPayload(cwd: string, fields: Record<string, unknown>): string {
  return JSON.stringify({
    session_id: 'test-session',
    transcript_path: join(cwd, '.transcript.jsonl'),
    cwd,
    permission_mode: 'default',
    ...fields,
    tool_use_id: 'toolu_test',
  });
}

/** The PreToolUse payload Claude Code sends for a tool call. */
export function preToolUse(
  toolName: string,
  toolInput: Record<string, unknown>,
  cwd: string,
): string {
  return toolHookPayload(cwd, {
    hook_event_name: 'PreToolUse',
    tool_name: toolName,
    tool_input: toolInput,
  });
}

/** The PostToolUse payload Claude Code sends after a tool call, with the tool's own output. */
export function postToolUse(
  toolName: string,
  toolInput: Record<string, unknown>,
  toolResponse: unknown,
  cwd: string,
): string {
  return toolHookPayload(cwd, {
    hook_event_name: 'PostToolUse',
    tool_name: toolName,
    tool_input: toolInput,
    tool_response: toolResponse,
  });
}
