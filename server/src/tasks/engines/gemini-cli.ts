import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CliEngine, CliEvent, CliFailureKind } from './cli-engine.ts';
import { cliTaskEngine } from './cli-task-engine.ts';

/** The user's Gemini login files, linked into the task's home so the login stays shared. */
const LOGIN_FILES = ['oauth_creds.json', 'google_accounts.json', 'settings.json'];
const NESTED_VARIABLES = [
  'GEMINI_CLI_HOME',
  'GEMINI_API_KEY',
  'GOOGLE_API_KEY',
  'GOOGLE_GEMINI_BASE_URL',
  'GEMINI_CLI',
];

/**
 * Gemini CLI as a worker: `gemini -p` with stream-json output, a per-task GEMINI_CLI_HOME, edits
 * auto-approved (`auto_edit`; every tool only with sandboxMode "danger-full-access").
 */
export const geminiCliEngine: CliEngine = {
  format: 'gemini-cli',
  binary: 'gemini',
  npmPackage: '@google/gemini-cli',
  loginHint:
    'log in: run `gemini` and pick "Login with Google" (or give the profile a baseUrl and a key)',
  // Code Assist (CODE_ASSIST_ENDPOINT in its code) and Google's OAuth token refresh.
  loginHosts: ['cloudcode-pa.googleapis.com', 'oauth2.googleapis.com'],
  loginFiles: LOGIN_FILES.map((file) => join('.gemini', file)),
  invocation(input) {
    const home = join(input.stateDir, 'gemini-home');
    const settingsDir = join(home, '.gemini');
    mkdirSync(settingsDir, { recursive: true, mode: 0o700 });
    if (input.profile.baseUrl) {
      // Few retries: a throttle becomes the task's error (and the shared cooldown) in seconds.
      const settings = {
        security: { auth: { selectedType: 'gemini-api-key' } },
        general: { maxAttempts: 3 },
      };
      writeFileSync(join(settingsDir, 'settings.json'), `${JSON.stringify(settings)}\n`);
    } else {
      shareLogin(input.userHome, settingsDir);
    }
    const approval = input.profile.sandboxMode === 'danger-full-access' ? 'yolo' : 'auto_edit';
    const args = [
      '--prompt',
      input.prompt,
      '--output-format',
      'stream-json',
      '--model',
      input.profile.model,
      '--approval-mode',
      approval,
      '--skip-trust',
    ];
    return {
      args,
      env: {
        GEMINI_CLI_HOME: home,
        ...(input.profile.baseUrl ? { GOOGLE_GEMINI_BASE_URL: input.profile.baseUrl } : {}),
        ...(input.apiKey ? { GEMINI_API_KEY: input.apiKey } : {}),
      },
      unset: NESTED_VARIABLES,
    };
  },
  createParser: createGeminiParser,
};

function shareLogin(userHome: string, settingsDir: string): void {
  for (const file of LOGIN_FILES) {
    const source = join(userHome, '.gemini', file);
    const link = join(settingsDir, file);
    if (existsSync(source) && !existsSync(link)) symlinkSync(source, link);
  }
}

/** The parts of Gemini CLI's stream-json events this engine reads. */
interface GeminiEvent {
  type?: string;
  model?: string;
  role?: string;
  content?: string;
  delta?: boolean;
  tool_name?: string;
  parameters?: Record<string, unknown>;
  status?: string;
  severity?: string;
  message?: string;
  error?: { type?: string; message?: string };
}

const EDIT_TOOLS = new Set(['write_file', 'replace', 'edit']);

/**
 * One stream-json line of `gemini -p` to task events. Assistant text comes in deltas; the
 * engine's final text is the text since the last tool call.
 */
export function createGeminiParser(): (line: string) => CliEvent[] {
  let answer = '';
  return (line) => {
    let event: GeminiEvent;
    try {
      event = JSON.parse(line) as GeminiEvent;
    } catch {
      return [];
    }
    if (typeof event !== 'object' || event === null) return [];
    if (event.type === 'init')
      return [{ activity: `gemini started (model ${event.model ?? '?'})` }];
    if (event.type === 'message' && event.role === 'assistant') {
      answer = event.delta ? answer + (event.content ?? '') : (event.content ?? '');
      return [{ finalText: answer }];
    }
    if (event.type === 'tool_use') {
      answer = '';
      const input = event.parameters ?? {};
      const target = [
        input.file_path,
        input.absolute_path,
        input.command,
        input.pattern,
        input.dir_path,
      ].find((value) => typeof value === 'string');
      const name = event.tool_name ?? 'tool';
      return [
        {
          isStep: true,
          activity: `${name} ${typeof target === 'string' ? target : ''}`.trim().slice(0, 200),
          ...(EDIT_TOOLS.has(name) && typeof input.file_path === 'string'
            ? { filesTouched: [input.file_path] }
            : {}),
        },
      ];
    }
    if (event.type === 'error')
      return [{ activity: `${event.severity ?? 'error'}: ${event.message ?? ''}`.slice(0, 200) }];
    if (event.type === 'result' && event.status === 'error') {
      const message = event.error?.message ?? 'the run failed';
      return [{ failure: { kind: failureKind(event.error?.type ?? '', message), message } }];
    }
    return [];
  };
}

/** From the error's class name first (FatalAuthenticationError, TerminalQuotaError, …), then its status. */
function failureKind(type: string, message: string): CliFailureKind {
  const isAuth =
    /Auth/i.test(type) ||
    /\b(401|403)\b|UNAUTHENTICATED|PERMISSION_DENIED|API key not valid/i.test(message);
  if (isAuth) return 'auth_failed';
  if (/TerminalQuota/i.test(type) || /daily quota|billing/i.test(message)) return 'quota';
  const isThrottle =
    /RetryableQuota/i.test(type) ||
    /\b429\b|RESOURCE_EXHAUSTED|Resource has been exhausted|rate.?limit/i.test(message);
  if (isThrottle) return 'throttle';
  return /quota/i.test(message) ? 'quota' : 'infra';
}

/** Gemini CLI as a task engine, on the shared task lifecycle. */
export const geminiTaskEngine = cliTaskEngine(geminiCliEngine);
