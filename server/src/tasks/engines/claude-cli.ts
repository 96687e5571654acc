import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { CliEngine, CliEvent, CliFailureKind } from './cli-engine.ts';
import { cliTaskEngine } from './cli-task-engine.ts';

/** Tools the worker gets; edits only under its working directory (the worktree). */
const ALLOWED_TOOLS = ['Read', 'Glob', 'Grep', 'LS', 'Bash', 'Edit(./**)', 'Write(./**)'];
const DENIED_TOOLS = ['WebFetch', 'WebSearch'];
const EDIT_TOOLS = new Set(['Edit', 'Write', 'MultiEdit', 'NotebookEdit']);
const LOGIN_FILE = join('.claude', '.credentials.json');
/** Variables of an enclosing Claude Code session that would make the child refuse or misbehave. */
const NESTED_SESSION_VARIABLES = [
  'CLAUDECODE',
  'CLAUDE_CODE_ENTRYPOINT',
  'CLAUDE_CODE_SSE_PORT',
  'CLAUDE_CODE_OAUTH_TOKEN',
  'CLAUDE_PROJECT_DIR',
  'CLAUDE_PLUGIN_ROOT',
  'ANTHROPIC_API_KEY',
  'ANTHROPIC_AUTH_TOKEN',
  'ANTHROPIC_BASE_URL',
  'ANTHROPIC_MODEL',
];

/** Claude Code as a worker: `claude -p` with stream-json events, its own config dir per task. */
export const claudeCliEngine: CliEngine = {
  format: 'claude-cli',
  binary: 'claude',
  npmPackage: '@anthropic-ai/claude-code',
  loginHint: 'log in: run `claude` then /login (or give the profile a baseUrl and a key)',
  // The API and the OAuth token refresh (BASE_API_URL and TOKEN_URL in its code).
  loginHosts: ['api.anthropic.com', 'platform.claude.com'],
  loginFiles: [LOGIN_FILE],
  invocation(input) {
    const configDir = join(input.stateDir, 'claude-config');
    mkdirSync(configDir, { recursive: true, mode: 0o700 });
    const usesLogin = !input.profile.baseUrl;
    if (usesLogin) shareLogin(input.userHome, configDir);
    const args = [
      '-p',
      input.prompt,
      '--output-format',
      'stream-json',
      '--verbose',
      '--no-session-persistence',
      '--strict-mcp-config',
      '--model',
      input.profile.model,
      '--permission-mode',
      'dontAsk',
      '--disallowedTools',
      ...DENIED_TOOLS,
      // Variadic, so it goes last where it cannot swallow other arguments.
      '--allowedTools',
      ...ALLOWED_TOOLS,
    ];
    const env: Record<string, string> = {
      CLAUDE_CONFIG_DIR: configDir,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
      // A few retries, then the task's throttle handling (a cooldown shared by all processes).
      CLAUDE_CODE_MAX_RETRIES: '2',
      ...(input.profile.baseUrl ? { ANTHROPIC_BASE_URL: input.profile.baseUrl } : {}),
      ...(input.apiKey ? { ANTHROPIC_API_KEY: input.apiKey } : {}),
    };
    return { args, env, unset: NESTED_SESSION_VARIABLES };
  },
  createParser: () => parseClaudeLine,
};

/** The user's login (`~/.claude/.credentials.json`) stays shared; the rest of the config is the task's. */
function shareLogin(userHome: string, configDir: string): void {
  const credentials = join(userHome, LOGIN_FILE);
  const link = join(configDir, '.credentials.json');
  if (existsSync(credentials) && !existsSync(link)) symlinkSync(credentials, link);
}

/** The parts of Claude Code's stream-json events this engine reads. */
interface ClaudeEvent {
  type?: string;
  subtype?: string;
  model?: string;
  error?: string;
  error_status?: number;
  attempt?: number;
  max_retries?: number;
  message?: { content?: ContentBlock[] };
  is_error?: boolean;
  result?: string;
  total_cost_usd?: number;
  api_error_status?: number;
  api_error_type?: string;
}

interface ContentBlock {
  type?: string;
  text?: string;
  name?: string;
  input?: Record<string, unknown>;
}

/** One stream-json line of `claude -p --verbose` to task events. */
export function parseClaudeLine(line: string): CliEvent[] {
  let event: ClaudeEvent;
  try {
    event = JSON.parse(line) as ClaudeEvent;
  } catch {
    return [];
  }
  if (typeof event !== 'object' || event === null) return [];
  if (event.type === 'system' && event.subtype === 'init') {
    return [{ activity: `claude started (model ${event.model ?? '?'})` }];
  }
  if (event.type === 'system' && event.subtype === 'api_retry') return retryEvents(event);
  if (event.type === 'assistant') return assistantEvents(event);
  if (event.type === 'result') return [resultEvent(event)];
  return [];
}

function retryEvents(event: ClaudeEvent): CliEvent[] {
  const kind = assistantErrorKind(event.error ?? '');
  const what = `API error ${event.error_status ?? '?'} (${event.error ?? 'unknown'})`;
  // A rejected key stays rejected: no point in the CLI's retries.
  if (kind === 'auth_failed') {
    return [{ failure: { kind, message: `the endpoint refused the key: ${what}` }, isFatal: true }];
  }
  return [{ activity: `${what}; retry ${event.attempt ?? '?'} of ${event.max_retries ?? '?'}` }];
}

function assistantEvents(event: ClaudeEvent): CliEvent[] {
  const blocks = Array.isArray(event.message?.content) ? event.message.content : [];
  const events: CliEvent[] = [];
  if (typeof event.error === 'string') {
    const text = textOf(blocks);
    events.push({
      failure: { kind: assistantErrorKind(event.error), message: text || event.error },
    });
  }
  for (const block of blocks) {
    if (block.type !== 'tool_use') continue;
    const input = block.input ?? {};
    const target = [input.file_path, input.path, input.command, input.pattern].find(
      (value) => typeof value === 'string',
    );
    const name = block.name ?? 'tool';
    events.push({
      isStep: true,
      activity: `${name} ${typeof target === 'string' ? target : ''}`.trim().slice(0, 200),
      ...(EDIT_TOOLS.has(name) && typeof input.file_path === 'string'
        ? { filesTouched: [input.file_path] }
        : {}),
    });
  }
  return events;
}

function resultEvent(event: ClaudeEvent): CliEvent {
  const status = Number(event.api_error_status);
  return {
    ...(typeof event.total_cost_usd === 'number' ? { costUsd: event.total_cost_usd } : {}),
    ...(typeof event.result === 'string' ? { finalText: event.result } : {}),
    ...(event.is_error && status
      ? {
          failure: {
            kind: statusKind(status, event.api_error_type ?? ''),
            message: event.result ?? `API error ${status}`,
          },
        }
      : {}),
  };
}

function assistantErrorKind(error: string): CliFailureKind {
  if (error === 'authentication_failed') return 'auth_failed';
  if (error === 'rate_limit') return 'throttle';
  if (error === 'billing_error') return 'quota';
  return 'infra';
}

function statusKind(status: number, type: string): CliFailureKind {
  if (status === 401 || status === 403 || type === 'authentication_error') return 'auth_failed';
  if (status === 402 || /billing|quota/.test(type)) return 'quota';
  if (status === 429 || type === 'rate_limit_error') return 'throttle';
  return 'infra';
}

function textOf(blocks: ContentBlock[]): string {
  return blocks
    .map((block) => (block.type === 'text' ? (block.text ?? '') : ''))
    .join('')
    .trim();
}

/** Claude Code as a task engine, on the shared task lifecycle. */
export const claudeTaskEngine = cliTaskEngine(claudeCliEngine);
