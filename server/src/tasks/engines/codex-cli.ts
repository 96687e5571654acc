import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CliEngine, CliEvent, CliFailureKind } from './cli-engine.ts';
import { cliTaskEngine } from './cli-task-engine.ts';

/** The variable the per-task Codex config names for the profile's key (set for the child only). */
const KEY_VARIABLE = 'DELEGATE_CODEX_API_KEY';
const NESTED_VARIABLES = ['CODEX_HOME', 'OPENAI_API_KEY', 'OPENAI_BASE_URL', 'CODEX_SANDBOX'];
const LOGIN_FILE = join('.codex', 'auth.json');

/**
 * Codex CLI as a worker: `codex exec --json` in the task's directory, a per-task CODEX_HOME
 * (with the user's auth.json linked in, so the login stays shared), the final message to a file.
 */
export const codexCliEngine: CliEngine = {
  format: 'codex-cli',
  binary: 'codex',
  npmPackage: '@openai/codex',
  loginHint: 'log in: run `codex login` (or give the profile a baseUrl and a key)',
  // A ChatGPT login (its backend and token refresh) or an API-key login, from its code.
  loginHosts: ['chatgpt.com', 'auth.openai.com', 'api.openai.com'],
  loginFiles: [LOGIN_FILE],
  invocation(input) {
    const codexHome = join(input.stateDir, 'codex-home');
    mkdirSync(codexHome, { recursive: true, mode: 0o700 });
    if (input.profile.baseUrl) {
      writeFileSync(join(codexHome, 'config.toml'), providerConfig(input.profile.baseUrl));
    } else {
      shareLogin(input.userHome, codexHome);
    }
    const lastMessage = join(input.stateDir, 'last-message.txt');
    // Codex's own sandbox cannot run inside the OS sandbox (see sandboxConflict), which then
    // confines it and every command it runs instead.
    const sandbox = input.isSandboxed
      ? 'danger-full-access'
      : (input.profile.sandboxMode ?? 'workspace-write');
    const args = [
      'exec',
      '--json',
      '--skip-git-repo-check',
      '--ephemeral',
      '--color',
      'never',
      '--cd',
      input.workdir,
      '--model',
      input.profile.model,
      '--sandbox',
      sandbox,
      '--output-last-message',
      lastMessage,
      ...(input.profile.effort
        ? ['--config', `model_reasoning_effort="${input.profile.effort}"`]
        : []),
      input.prompt,
    ];
    return {
      args,
      env: { CODEX_HOME: codexHome, ...(input.apiKey ? { [KEY_VARIABLE]: input.apiKey } : {}) },
      unset: NESTED_VARIABLES,
      finalMessageFile: lastMessage,
    };
  },
  createParser: () => parseCodexLine,
  sandboxConflict: (profile) =>
    profile.sandboxMode === 'read-only'
      ? `profile "${profile.name}" asks for Codex's read-only sandbox, which cannot run inside the OS ` +
        'sandbox (Codex confines each command with a bubblewrap of its own, and the OS sandbox refuses ' +
        'the user namespace that needs), and the OS sandbox alone lets commands write the worktree'
      : undefined,
};

function providerConfig(baseUrl: string): string {
  return [
    'model_provider = "delegate"',
    '[model_providers.delegate]',
    'name = "delegate profile"',
    `base_url = ${JSON.stringify(baseUrl)}`,
    `env_key = "${KEY_VARIABLE}"`,
    'wire_api = "responses"',
    // Few retries: a throttle becomes the task's error (and the shared cooldown) in seconds.
    'request_max_retries = 1',
    'stream_max_retries = 1',
    '',
  ].join('\n');
}

function shareLogin(userHome: string, codexHome: string): void {
  const auth = join(userHome, LOGIN_FILE);
  const link = join(codexHome, 'auth.json');
  if (existsSync(auth) && !existsSync(link)) symlinkSync(auth, link);
}

/** The parts of `codex exec --json` events this engine reads. */
interface CodexEvent {
  type?: string;
  message?: string;
  error?: { message?: string };
  item?: {
    type?: string;
    text?: string;
    message?: string;
    command?: string;
    changes?: Array<{ path?: string; kind?: string }>;
    query?: string;
    tool?: string;
  };
}

/** One JSONL event of `codex exec --json` to task events. */
export function parseCodexLine(line: string): CliEvent[] {
  let event: CodexEvent;
  try {
    event = JSON.parse(line) as CodexEvent;
  } catch {
    return [];
  }
  if (typeof event !== 'object' || event === null) return [];
  if (event.type === 'thread.started') return [{ activity: 'codex started' }];
  if (event.type === 'turn.failed') {
    const message = event.error?.message ?? 'the turn failed';
    return [{ failure: { kind: failureKind(message), message } }];
  }
  if (event.type === 'error') {
    const message = event.message ?? 'error';
    // Codex reports its own retries as errors; they are progress, not the end.
    if (/^Reconnecting/i.test(message)) return [{ activity: message.slice(0, 200) }];
    return [{ failure: { kind: failureKind(message), message }, isFatal: true }];
  }
  if (event.type === 'item.started' || event.type === 'item.completed') {
    return itemEvents(event.type, event.item ?? {});
  }
  return [];
}

function itemEvents(type: string, item: NonNullable<CodexEvent['item']>): CliEvent[] {
  if (item.type === 'agent_message' && type === 'item.completed') {
    return [{ finalText: item.text ?? '' }];
  }
  if (type !== 'item.started' && item.type !== 'file_change') return [];
  if (item.type === 'command_execution') {
    return [{ isStep: true, activity: `run ${item.command ?? ''}`.slice(0, 200) }];
  }
  if (item.type === 'file_change') {
    const paths = (item.changes ?? []).flatMap((change) => (change.path ? [change.path] : []));
    return [
      { isStep: true, activity: `edit ${paths.join(', ')}`.slice(0, 200), filesTouched: paths },
    ];
  }
  if (item.type === 'mcp_tool_call' || item.type === 'web_search') {
    return [
      { isStep: true, activity: `${item.type} ${item.tool ?? item.query ?? ''}`.slice(0, 200) },
    ];
  }
  return [];
}

/** Codex's error events carry the HTTP status or the service's own words for the cause. */
function failureKind(message: string): CliFailureKind {
  if (/\b(401|403)\b|unauthori[sz]ed|invalid api key|not logged in|login/i.test(message)) {
    return 'auth_failed';
  }
  if (/quota|usage limit|billing|insufficient_quota|\b402\b/i.test(message)) return 'quota';
  if (/\b429\b|rate.?limit|too many requests/i.test(message)) return 'throttle';
  return 'infra';
}

/** Codex as a task engine, on the shared task lifecycle. */
export const codexTaskEngine = cliTaskEngine(codexCliEngine);
