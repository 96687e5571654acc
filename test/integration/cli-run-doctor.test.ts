import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { CLI_BUNDLE } from '../helpers/cli-process.ts';
import type { FakeProviderOptions } from '../helpers/fake-provider.ts';
import { taskTest } from '../helpers/task-world.ts';
import { CLOSED_URL, makeLog, type TempEnv } from '../helpers/temp-env.ts';
import { waitFor } from '../helpers/wait.ts';

const NO_BWRAP = { DELEGATE_BWRAP_PATH_FOR_TEST: '/nonexistent/bwrap' };

function cli(
  world: TempEnv,
  args: string[],
  options: { env?: Record<string, string>; input?: string } = {},
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI_BUNDLE, ...args], {
    env: { ...world.env, ...options.env },
    cwd: world.project,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdin.end(options.input ?? '');
  return new Promise((resolve) =>
    child.on('close', (status) => resolve({ status, stdout, stderr })),
  );
}

const it = taskTest.extend(
  'withWorker',
  ({ world, provider }) =>
    async (reply: FakeProviderOptions = {}): Promise<void> => {
      const fake = await provider.start({
        respond: () => ({ text: 'ERROR at 04:00: disk full.', model: 'qwen-test' }),
        models: ['qwen-test'],
        ...reply,
      });
      world.writeConfig({
        defaultProfile: 'local',
        profiles: {
          local: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'qwen-test', local: true },
        },
      });
    },
);
it.override('repository', null);

describe('delegate run', () => {
  it('sends the task and the files to the worker and prints its answer and the usage line', async ({
    withWorker,
    world,
    provider,
  }) => {
    await withWorker();
    const log = makeLog(40 * 1024);
    world.writeProjectFile('logs/app.log', log);
    const result = await cli(world, ['run', 'List every ERROR', 'logs/*.log']);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toMatch(
      /^ERROR at 04:00: disk full\.\n\n\[delegate: profile local · model qwen-test · .* · sent 40\.0 KB from 1 file\]\n$/,
    );
    // No terminal: no progress indicator.
    expect(result.stderr).toBe('');
    const prompt = JSON.stringify(provider.started!.requests[0]!.body.messages);
    expect(prompt).toContain(JSON.stringify(log).slice(1, 200));
    expect(prompt).toContain('List every ERROR');
  });

  it('reads the task from stdin with `-`; errors are one clear line and a non-zero exit', async ({
    withWorker,
    world,
    provider,
  }) => {
    await withWorker();
    const fromStdin = await cli(world, ['run', '-', '--profile', 'local'], { input: 'Say hi\n' });
    expect(fromStdin.status, fromStdin.stderr).toBe(0);
    expect(JSON.stringify(provider.started!.requests[0]!.body.messages)).toContain('Say hi');

    const outside = await cli(world, ['run', 'Read it', '/etc/passwd']);
    expect(outside.status).toBe(1);
    expect(outside.stderr).toMatch(/^delegate: .*outside the project/);
    expect(outside.stderr).not.toMatch(/\n\s+at /);

    const unreachable = await cli(world, ['run', 'x', '--profile', 'env'], {
      env: { DELEGATE_BASE_URL: CLOSED_URL, DELEGATE_MODEL: 'm' },
    });
    expect(unreachable.status).toBe(1);
    expect(unreachable.stderr).toMatch(/^delegate: Worker profile "env" .* Cannot reach .*\n$/);

    const unknown = await cli(world, ['run', 'x', '--profile', 'nope']);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toMatch(/^delegate: .*"nope".*\n$/);

    const usage = await cli(world, ['run']);
    expect(usage.status).toBe(2);
    expect(usage.stderr).toMatch(
      /^delegate: say what the worker should do\.\nUsage: delegate run /,
    );
  });

  it('shows a progress indicator on a terminal only', async ({ withWorker, world }) => {
    await withWorker({ respond: () => ({ text: 'slow answer', delayMs: 700 }) });
    if (spawnSync('script', ['--version']).status !== 0) return;
    const child = spawn(
      'script',
      ['-qec', `"${process.execPath}" "${CLI_BUNDLE}" run hello`, '/dev/null'],
      {
        env: world.env,
        cwd: world.project,
      },
    );
    let transcript = '';
    child.stdout.on('data', (chunk: Buffer) => (transcript += chunk.toString()));
    try {
      await waitFor(() => transcript.includes('slow answer'), 10_000);
    } finally {
      child.kill('SIGKILL');
    }
    expect(transcript).toMatch(/waiting for the worker… \d+\.\d s/);
  });
});

describe('delegate doctor', () => {
  it('passes with a reachable profile; the sandbox and Claude Code are warnings at most', async ({
    withWorker,
    world,
  }) => {
    await withWorker();
    const result = await cli(world, ['doctor'], { env: NO_BWRAP });
    expect(result.status, result.stdout + result.stderr).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toMatch(/^ok {3}Node\.js v\d+/);
    expect(lines[1]).toBe(`ok   data home ${world.dataHome} is writable`);
    expect(lines[2]).toMatch(/^ok {3}config valid \(.*config\.json; 1 profile\)$/);
    expect(result.stdout).toMatch(/^ok {3}profiles reachable, keys in place$/m);
    expect(result.stdout).toMatch(/check: reachable in \d+ ms; serves qwen-test/);
    expect(result.stdout).toMatch(/^warn OS sandbox not available: .*/m);
    expect(result.stdout).toMatch(
      /^(ok {3}Claude Code \d|warn Claude Code: `claude` is not on PATH)/m,
    );
    expect(result.stdout).toMatch(/^ok {3}status line not installed in /m);
    expect(result.stdout).toMatch(/All checks passed\.\n$/);
  });

  it('fails (exit 1) on an unreachable profile, a missing key, or a broken config', async ({
    world,
  }) => {
    world.writeConfig({
      profiles: {
        dead: { format: 'openai', baseUrl: CLOSED_URL, model: 'm', local: true },
        keyed: {
          format: 'openai',
          baseUrl: 'http://127.0.0.1:2/v1',
          model: 'm',
          apiKeyEnv: 'DOCTOR_TEST_KEY',
        },
      },
    });
    const result = await cli(world, ['doctor'], { env: NO_BWRAP });
    expect(result.status).toBe(1);
    expect(result.stdout).toMatch(/^FAIL profiles: a profile cannot be used as it stands/m);
    expect(result.stdout).toContain('check: FAILED');
    expect(result.stdout).toContain('key from $DOCTOR_TEST_KEY (NOT SET');

    world.writeConfig({ profiles: { bad: { format: 'nope' } } });
    const broken = await cli(world, ['doctor'], { env: NO_BWRAP });
    expect(broken.status).toBe(1);
    expect(broken.stdout).toMatch(/^FAIL config invalid: /m);
    expect(broken.stderr).toBe('');
  });

  it('prints each finding once: a broken config fails the config and the profiles alike', async ({
    world,
  }) => {
    for (const config of [
      '{\n  "profiles": {,\n}\n',
      '{"profiles": {"bad": {"format": "nope"}}}',
    ]) {
      writeFileSync(join(world.dataHome, 'config.json'), config);
      const result = await cli(world, ['doctor'], { env: NO_BWRAP });
      expect(result.status).toBe(1);
      const failures = result.stdout.split('\n').filter((line) => line.startsWith('FAIL'));
      expect(failures, result.stdout).toHaveLength(1);
      expect(failures[0]).toMatch(/^FAIL config invalid: Invalid config in .*config\.json/);
      expect(result.stdout.split('Invalid config in').length - 1).toBe(1);
      expect(result.stdout).toMatch(/\n1 check failed\.\n$/);
    }
  });
});

describe('delegate usage', () => {
  it('prints the ledger report; an unknown period is a usage error', async ({ world }) => {
    const result = await cli(world, ['usage', 'today']);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^Today \(\d{4}-\d\d-\d\d UTC\): no calls\./);
    expect((await cli(world, ['usage', 'yesterday'])).status).toBe(2);
  });
});
