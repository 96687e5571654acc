// Runs the real Claude Code CLI as an interactive session in a pseudo-terminal (`script`), for
// what headless `-p` never does (plugin monitors arm only in interactive sessions). The first
// run screens are answered in HOME's .claude.json beforehand: onboarding, the API key, and
// trust of the project folder. Every model call goes to the fake API; nothing outlives `stop`.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { claudeBinary } from './claude-cli.ts';

const FAKE_API_KEY = 'sk-ant-fake-supervisor-interactive-0123456789';

export interface InteractiveClaude {
  /** Everything the CLI drew, ANSI sequences included. */
  screen(): string;
  /** Keys typed into the terminal (`\r` is Enter). */
  type(keys: string): void;
  stop(): void;
}

export async function startInteractiveClaude(options: {
  cwd: string;
  home: string;
  baseUrl: string;
  pluginDir: string;
  env?: Record<string, string>;
  /** More command-line arguments (e.g. `--allowedTools …`), each quoted for the shell. */
  args?: string[];
}): Promise<InteractiveClaude> {
  writeFileSync(
    join(options.home, '.claude.json'),
    JSON.stringify({
      hasCompletedOnboarding: true,
      theme: 'dark',
      customApiKeyResponses: { approved: [FAKE_API_KEY.slice(-20)], rejected: [] },
      projects: { [options.cwd]: { hasTrustDialogAccepted: true } },
    }),
  );
  const tmp = join(options.home, '.claude-cli-run', 'tmp');
  mkdirSync(tmp, { recursive: true, mode: 0o700 });
  const binary = await claudeBinary();
  const child = spawn(
    'script',
    [
      '-qfec',
      [
        `'${binary}'`,
        '--plugin-dir',
        `'${options.pluginDir}'`,
        ...(options.args ?? []).map((arg) => `'${arg}'`),
      ].join(' '),
      '/dev/null',
    ],
    {
      cwd: options.cwd,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        LANG: 'C.UTF-8',
        TERM: 'xterm-256color',
        HOME: options.home,
        CLAUDE_CODE_TMPDIR: tmp,
        TMPDIR: tmp,
        XDG_RUNTIME_DIR: tmp,
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_TELEMETRY: '1',
        DISABLE_AUTOUPDATER: '1',
        DISABLE_ERROR_REPORTING: '1',
        CLAUDE_CODE_MAX_RETRIES: '0',
        ENABLE_TOOL_SEARCH: 'false',
        ANTHROPIC_BASE_URL: options.baseUrl,
        ANTHROPIC_API_KEY: FAKE_API_KEY,
        ...options.env,
      },
    },
  );
  let screen = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (screen += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (screen += chunk));
  return {
    screen: () => screen,
    type: (keys) => child.stdin.write(keys),
    stop: () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // Already gone.
      }
    },
  };
}
