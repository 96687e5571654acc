// Drives the real, pinned Claude Code CLI offline: every model call goes to a fake Messages API
// on 127.0.0.1, HOME and all temp files live in the caller's temp dir, nothing outlives a run.
import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { scaledMs } from './timing.ts';

/** One finished `claude -p` run, with its stream-json output parsed. */
export interface ClaudeRun {
  exitCode: number | null;
  /** Every stream-json line of stdout that parsed as JSON, in order. */
  events: any[];
  stdout: string;
  stderr: string;
  /** The last event with `type: 'result'`. */
  result: any | undefined;
  /** The `system`/`init` event: tools, mcp_servers, plugins, skills, agents. */
  init: any | undefined;
  wallMs: number;
}

export interface ClaudeRunOptions {
  prompt: string;
  cwd: string;
  /** A temp dir used as HOME; the run's TMPDIR and runtime dir are made inside it. */
  home: string;
  /** Base URL of the fake Anthropic API, e.g. `http://127.0.0.1:41234`. */
  baseUrl: string;
  /** Loads this plugin for the session only (`--plugin-dir`). */
  pluginDir?: string;
  allowedTools?: string[];
  extraArgs?: string[];
  /** Added last, so it can override any default below. */
  env?: Record<string, string>;
  timeoutMs?: number;
}

export interface ClaudeCommandOptions {
  home: string;
  cwd: string;
  env?: Record<string, string>;
  timeoutMs?: number;
}

export interface ClaudeCommandResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

interface Installer {
  ensureClaudeCli(): Promise<string>;
}

const INSTALLER_URL = new URL('../../scripts/install-claude-cli.mjs', import.meta.url).href;
const DEFAULT_TIMEOUT_MS = 60_000;
const FAKE_API_KEY = 'sk-ant-fake-supervisor';

/** Path of the pinned `claude` binary, installed into `.cache/` on first use. */
export async function claudeBinary(): Promise<string> {
  const installer = (await import(INSTALLER_URL)) as Installer;
  return installer.ensureClaudeCli();
}

/** Runs `claude -p <prompt>` in stream-json mode against the fake API at `baseUrl`. */
export async function runClaude(options: ClaudeRunOptions): Promise<ClaudeRun> {
  const args = [
    '-p',
    options.prompt,
    '--output-format',
    'stream-json',
    '--verbose',
    '--include-hook-events',
    '--no-session-persistence',
    ...(options.pluginDir ? ['--plugin-dir', options.pluginDir] : []),
    ...(options.extraArgs ?? []),
    // Variadic, so it goes last where it cannot swallow other arguments.
    ...(options.allowedTools?.length ? ['--allowedTools', ...options.allowedTools] : []),
  ];
  const env = {
    ANTHROPIC_BASE_URL: options.baseUrl,
    ANTHROPIC_API_KEY: FAKE_API_KEY,
    ...options.env,
  };
  const binary = await claudeBinary();
  const started = performance.now();
  const output = await spawnClaude(binary, args, { ...options, env });
  const events = parseStreamJson(output.stdout);
  return {
    ...output,
    events,
    result: events.findLast((event) => event?.type === 'result'),
    init: events.find((event) => event?.type === 'system' && event.subtype === 'init'),
    wallMs: performance.now() - started,
  };
}

/** Runs any other `claude` command, e.g. `['plugin', 'validate', dir, '--strict']`. */
export function runClaudeCommand(
  args: string[],
  options: ClaudeCommandOptions,
): Promise<ClaudeCommandResult> {
  return claudeBinary().then((binary) => spawnClaude(binary, args, options));
}

async function spawnClaude(
  binary: string,
  args: string[],
  options: ClaudeCommandOptions,
): Promise<ClaudeCommandResult> {
  const env = { ...(await isolatedEnv(options.home)), ...options.env };
  const timeoutMs = scaledMs(options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  return new Promise((resolve, reject) => {
    // Own process group, so the CLI and its MCP servers and hooks can be killed together.
    const child = spawn(binary, args, {
      cwd: options.cwd,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid);
    }, timeoutMs);
    // Anything still in the group once the CLI has exited is a leftover.
    child.on('exit', () => killGroup(child.pid));
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (exitCode) => {
      clearTimeout(timer);
      if (timedOut) stderr += `\n[claude-cli helper] killed after ${timeoutMs} ms\n`;
      resolve({ exitCode, stdout, stderr });
    });
  });
}

/** No ANTHROPIC_* or CLAUDE* variable of the developer leaks in; temp files stay under `home`. */
async function isolatedEnv(home: string): Promise<Record<string, string>> {
  const privateDir = join(home, '.claude-cli-run');
  const tmpDir = join(privateDir, 'tmp');
  const runtimeDir = join(privateDir, 'runtime');
  await mkdir(tmpDir, { recursive: true, mode: 0o700 });
  await mkdir(runtimeDir, { recursive: true, mode: 0o700 });
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    LANG: process.env.LANG ?? 'C.UTF-8',
    HOME: home,
    CLAUDE_CODE_TMPDIR: tmpDir,
    TMPDIR: tmpDir,
    XDG_RUNTIME_DIR: runtimeDir,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_MAX_RETRIES: '0',
    ENABLE_TOOL_SEARCH: 'false',
  };
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // The group is already gone.
  }
}

function parseStreamJson(stdout: string): any[] {
  const events: any[] = [];
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      events.push(JSON.parse(line));
    } catch {
      // A partial line from a killed run.
    }
  }
  return events;
}
