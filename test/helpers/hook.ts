import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from './mcp-server.ts';
import { scaledMs } from './timing.ts';

export interface HookRun {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed, when it is JSON. */
  json: any;
}

/** Runs a built hook bundle with `stdin` exactly as Claude Code would send it. */
export function runHook(
  bundle: 'pre-tool-use' | 'session-start',
  stdin: string,
  env: Record<string, string>,
): HookRun {
  const result = spawnSync(process.execPath, [join(REPO_ROOT, 'dist', `${bundle}.cjs`)], {
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

/** The PreToolUse payload Claude Code sends for a tool call. */
export function preToolUse(
  toolName: string,
  toolInput: Record<string, unknown>,
  cwd: string,
): string {
  return JSON.stringify({
    session_id: 'test-session',
    transcript_path: join(cwd, '.transcript.jsonl'),
    cwd,
    permission_mode: 'default',
    hook_event_name: 'PreToolUse',
    tool_name: toolName,
    tool_input: toolInput,
    tool_use_id: 'toolu_test',
  });
}
