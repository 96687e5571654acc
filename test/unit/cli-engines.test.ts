import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { taskAllowHosts, taskSandboxPolicy } from '../../server/src/sandbox/index.ts';
import { loadConfig } from '../../server/src/profiles/load-config.ts';
import { cliEndpointHosts, cliSandboxPaths } from '../../server/src/tasks/engines/cli-sandbox.ts';
import { cliEngineFor } from '../../server/src/tasks/engines/registry.ts';
import { sandboxLine } from '../../server/src/tasks/task-format.ts';
import { parseClaudeLine } from '../../server/src/tasks/engines/claude-cli.ts';
import { codexCliEngine, parseCodexLine } from '../../server/src/tasks/engines/codex-cli.ts';
import { createGeminiParser } from '../../server/src/tasks/engines/gemini-cli.ts';
import type { ResolvedProfile } from '../../server/src/config/resolved-profile.ts';
import type { JobFile } from '../../server/src/store/job-file.ts';

describe('claude-cli events', () => {
  it('maps tool calls to steps, edits to files touched, and the result to summary and cost', () => {
    const tool = parseClaudeLine(
      JSON.stringify({
        type: 'assistant',
        message: {
          content: [
            { type: 'text', text: 'Editing.' },
            { type: 'tool_use', name: 'Edit', input: { file_path: '/w/src/a.js' } },
          ],
        },
      }),
    );
    expect(tool).toEqual([
      { isStep: true, activity: 'Edit /w/src/a.js', filesTouched: ['/w/src/a.js'] },
    ]);
    expect(
      parseClaudeLine(
        JSON.stringify({ type: 'result', is_error: false, result: 'Done.', total_cost_usd: 0.02 }),
      ),
    ).toEqual([{ costUsd: 0.02, finalText: 'Done.' }]);
  });

  it('classifies failures from the CLI’s own error fields, never from the text', () => {
    const kinds = [
      { type: 'system', subtype: 'api_retry', error_status: 401, error: 'authentication_failed' },
      { type: 'assistant', error: 'rate_limit', message: { content: [] } },
      { type: 'assistant', error: 'billing_error', message: { content: [] } },
      { type: 'result', is_error: true, api_error_status: 529, result: 'Overloaded' },
      { type: 'result', is_error: true, api_error_status: 429, result: 'x' },
    ].map((event) => parseClaudeLine(JSON.stringify(event))[0]?.failure?.kind);
    expect(kinds).toEqual(['auth_failed', 'throttle', 'quota', 'infra', 'throttle']);
    // A task that prints "401 rate limit" in its answer is not a failure.
    const printed = parseClaudeLine(
      JSON.stringify({
        type: 'assistant',
        message: { content: [{ type: 'text', text: 'API Error: 401 authentication_error' }] },
      }),
    );
    expect(printed).toEqual([]);
    expect(parseClaudeLine('not json')).toEqual([]);
  });
});

describe('codex-cli events', () => {
  it('maps items to progress and errors to kinds; reconnect notices are progress', () => {
    const line = (event: unknown) => parseCodexLine(JSON.stringify(event));
    expect(
      line({ type: 'item.started', item: { type: 'command_execution', command: 'npm test' } }),
    ).toEqual([{ isStep: true, activity: 'run npm test' }]);
    expect(
      line({ type: 'item.completed', item: { type: 'file_change', changes: [{ path: 'a.ts' }] } }),
    ).toEqual([{ isStep: true, activity: 'edit a.ts', filesTouched: ['a.ts'] }]);
    expect(
      line({ type: 'item.completed', item: { type: 'agent_message', text: 'Done.' } }),
    ).toEqual([{ finalText: 'Done.' }]);
    expect(line({ type: 'error', message: 'Reconnecting... 1/5' })[0]?.failure).toBeUndefined();
    const kinds = [
      'unexpected status 401 Unauthorized: bad key',
      'exceeded retry limit, last status: 429 Too Many Requests',
      'Quota exceeded. Check your plan and billing details.',
      'stream disconnected before completion',
    ].map((message) => line({ type: 'turn.failed', error: { message } })[0]?.failure?.kind);
    expect(kinds).toEqual(['auth_failed', 'throttle', 'quota', 'infra']);
    // What a command printed is never classified.
    expect(
      line({
        type: 'item.completed',
        item: { type: 'command_execution', command: 'echo 401', aggregated_output: '401' },
      }),
    ).toEqual([]);
  });
});

describe('gemini-cli events', () => {
  it('joins answer deltas after the last tool call, and classifies errors by their class', () => {
    const parse = createGeminiParser();
    const line = (event: unknown) => parse(JSON.stringify(event));
    line({ type: 'message', role: 'assistant', content: 'Let me look.', delta: true });
    expect(
      line({ type: 'tool_use', tool_name: 'replace', parameters: { file_path: 'src/a.js' } }),
    ).toEqual([{ isStep: true, activity: 'replace src/a.js', filesTouched: ['src/a.js'] }]);
    line({ type: 'message', role: 'assistant', content: 'Fixed ', delta: true });
    expect(line({ type: 'message', role: 'assistant', content: 'it.', delta: true })).toEqual([
      { finalText: 'Fixed it.' },
    ]);
    const kind = (type: string, message: string) =>
      createGeminiParser()(
        JSON.stringify({ type: 'result', status: 'error', error: { type, message } }),
      )[0]?.failure?.kind;
    expect(kind('FatalAuthenticationError', 'x')).toBe('auth_failed');
    expect(kind('TerminalQuotaError', 'x')).toBe('quota');
    expect(kind('RetryableQuotaError', 'x')).toBe('throttle');
    expect(kind('Error', 'fetch failed')).toBe('infra');
    expect(kind('unknown', '[API Error: Resource has been exhausted (e.g. check quota).]')).toBe(
      'throttle',
    );
  });
});

describe('CLI profiles and failover', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const configWith = (profiles: unknown) => {
    const dir = mkdtempSync(join(tmpdir(), 'delegate-unit-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ profiles }));
    return () => loadConfig(dir, dir, { HOME: dir });
  };
  const api = { format: 'anthropic', baseUrl: 'https://api.example.com', model: 'm' };

  it('a CLI profile never fails over, and is never a failover target', () => {
    expect(
      configWith({ cc: { format: 'claude-cli', model: 'sonnet', failover: ['api'] }, api }),
    ).toThrow(/a CLI profile \(claude-cli\) never fails over/);
    expect(
      configWith({ api: { ...api, failover: ['cc'] }, cc: { format: 'claude-cli', model: 's' } }),
    ).toThrow(/"cc" is a CLI profile, which is never a failover target/);
    expect(
      configWith({ cc: { format: 'claude-cli', model: 'sonnet' } })().profiles.get('cc')?.format,
    ).toBe('claude-cli');
  });
});

describe('CLI engines in the OS sandbox', () => {
  const profile = (extra: Partial<ResolvedProfile>) =>
    ({
      name: 'p',
      format: 'codex-cli',
      model: 'm',
      source: 'config',
      origin: 'config.json',
      ...extra,
    }) as ResolvedProfile;
  const claude = cliEngineFor('claude-cli');

  it('let through the profile endpoint’s host:port, loopback literals for localhost, else the CLI’s login hosts', () => {
    expect(cliEndpointHosts(claude, { baseUrl: 'http://127.0.0.1:8080/v1' })).toEqual([
      '127.0.0.1:8080',
    ]);
    expect(cliEndpointHosts(claude, { baseUrl: 'https://api.example.com/anthropic' })).toEqual([
      'api.example.com:443',
    ]);
    expect(cliEndpointHosts(claude, { baseUrl: 'http://[::1]/v1' })).toEqual(['[::1]:80']);
    expect(cliEndpointHosts(claude, { baseUrl: 'http://localhost:11434' })).toEqual([
      'localhost:11434',
      '127.0.0.1:11434',
      '[::1]:11434',
    ]);
    expect(cliEndpointHosts(claude, {})).toEqual(['api.anthropic.com', 'platform.claude.com']);
    for (const format of ['claude-cli', 'codex-cli', 'gemini-cli'] as const) {
      const hosts = cliEndpointHosts(cliEngineFor(format), {});
      expect(hosts.length).toBeGreaterThan(0);
      expect(taskAllowHosts(hosts)).toEqual(hosts);
    }
  });

  it('make the CLI’s state folder writable, and a login profile’s existing login files readable', () => {
    const home = mkdtempSync(join(tmpdir(), 'delegate-unit-'));
    try {
      mkdirSync(join(home, '.claude'));
      writeFileSync(join(home, '.claude', '.credentials.json'), '{}');
      expect(cliSandboxPaths(claude, {}, '/d/jobs/t_1/cli-state', home)).toEqual({
        readable: [join(home, '.claude', '.credentials.json')],
        writable: ['/d/jobs/t_1/cli-state'],
      });
      expect(cliSandboxPaths(claude, { baseUrl: 'http://127.0.0.1:1' }, '/s', home)).toEqual({
        readable: [],
        writable: ['/s'],
      });
      expect(cliSandboxPaths(cliEngineFor('codex-cli'), {}, '/s', home).readable).toEqual([]);
      const policy = taskSandboxPolicy({
        taskDir: '/w/t',
        tmpDir: '/d/jobs/t_1/tmp',
        dataHome: '/d',
        home,
        writable: ['/d/jobs/t_1/cli-state'],
        readable: [join(home, '.claude', '.credentials.json')],
      });
      expect(policy.writable).toEqual(['/w/t', '/d/jobs/t_1/tmp', '/d/jobs/t_1/cli-state']);
      expect(policy.readable).toContain('/d/jobs/t_1/cli-state');
      expect(policy.readable).toContain(join(home, '.claude', '.credentials.json'));
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('Codex’s own sandbox is off inside the OS sandbox; a read-only Codex profile cannot run there', () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'delegate-unit-'));
    try {
      const args = (isSandboxed: boolean, sandboxMode?: ResolvedProfile['sandboxMode']) => {
        const invocation = codexCliEngine.invocation({
          prompt: 'x',
          profile: profile({
            baseUrl: 'http://127.0.0.1:1/v1',
            ...(sandboxMode ? { sandboxMode } : {}),
          }),
          workdir: '/w',
          stateDir,
          userHome: stateDir,
          isSandboxed,
        }).args;
        return invocation[invocation.indexOf('--sandbox') + 1];
      };
      expect(args(true)).toBe('danger-full-access');
      expect(args(false)).toBe('workspace-write');
      expect(args(false, 'read-only')).toBe('read-only');
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
    expect(codexCliEngine.sandboxConflict?.(profile({ sandboxMode: 'read-only' }))).toMatch(
      /profile "p" asks for Codex's read-only sandbox, which cannot run inside the OS sandbox/,
    );
    expect(codexCliEngine.sandboxConflict?.(profile({}))).toBeUndefined();
    expect(
      codexCliEngine.sandboxConflict?.(profile({ sandboxMode: 'workspace-write' })),
    ).toBeUndefined();
    expect('sandboxConflict' in claude).toBe(false);
    expect('sandboxConflict' in cliEngineFor('gemini-cli')).toBe(false);
  });

  it('task_progress says whether a task runs sandboxed, and the hosts it may reach', () => {
    const job = { sandboxed: true, allowHosts: ['127.0.0.1:8080'] } as JobFile;
    expect(sandboxLine(job)).toBe('sandbox: on · network: 127.0.0.1:8080');
    expect(sandboxLine({ sandboxed: true } as JobFile)).toBe('sandbox: on · network: none');
    expect(sandboxLine({ sandboxed: false, sandboxNote: 'why' } as JobFile)).toBe(
      'sandbox: off — unsandboxed (why)',
    );
    expect(sandboxLine({} as JobFile)).toBe('');
  });
});
