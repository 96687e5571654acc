import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCliWorld, type CliWorld } from '../helpers/cli-engine-world.ts';
import {
  expectSandboxedFix,
  startEscapeProbe,
  type EscapeProbe,
} from '../helpers/cli-sandbox-probe.ts';
import { startFakeGemini, type FakeGemini, type GeminiReply } from '../helpers/fake-gemini.ts';
import { FIXED_ADD, git } from '../helpers/git-project.ts';
import { startServer, type ServerHandle } from '../helpers/mcp-server.ts';
import { endTaskTest } from '../helpers/processes.ts';
import { pollTaskStatus, taskIdOf } from '../helpers/wait.ts';
import { workerCliBinary } from '../helpers/worker-cli.ts';

const SECRET = 'gk-gemini-secret-0123456789';
let world: CliWorld;
let fake: FakeGemini | undefined;
let server: ServerHandle | undefined;
let gemini: string;
let probe: EscapeProbe | undefined;

beforeEach(async () => {
  gemini = await workerCliBinary('gemini');
  world = createCliWorld();
  world.linkBinary('gemini', gemini);
}, 300_000);
afterEach(async () => {
  await endTaskTest(world, server, fake, probe);
  server = undefined;
  fake = undefined;
  probe = undefined;
});

async function startWith(
  steps: GeminiReply[],
  settings: { sandbox?: string; sandboxMode?: string } = {},
): Promise<ServerHandle> {
  fake = await startFakeGemini(steps);
  world.writeConfig({
    ...(settings.sandbox ? { sandbox: settings.sandbox } : {}),
    profiles: {
      gm: {
        format: 'gemini-cli',
        baseUrl: fake.url,
        model: 'gemini-fake',
        apiKeyEnv: 'GM_KEY',
        ...(settings.sandboxMode ? { sandboxMode: settings.sandboxMode } : {}),
      },
    },
  });
  server = await startServer({ ...world.env, GM_KEY: SECRET });
  return server;
}

describe('gemini-cli engine (the real Gemini CLI against a fake Gemini API)', () => {
  it('start → progress → done (tests pass) → result with the patch; key only in the child env', async () => {
    const handle = await startWith([
      { call: { name: 'write_file', args: { file_path: 'src/add.js', content: FIXED_ADD } } },
      { text: 'Rewrote src/add.js so add() adds.' },
    ]);
    const started = await handle.callText('task_start', {
      task: 'Fix add() so node test.js passes',
      test_command: 'node test.js',
    });
    expect(started.isError, started.text).toBe(false);
    const id = taskIdOf(started.text);
    const done = await pollTaskStatus(handle, id, /done|failed|lost|timeout/, 90_000);
    expect(done, readFileSync(join(world.dataHome, 'jobs', id, 'events.jsonl'), 'utf8')).toMatch(
      new RegExp(`^${id} done passed`),
    );
    const progress = await handle.callText('task_progress', { task_id: id });
    expect(progress.text).toContain('write_file src/add.js');
    expect(progress.text).toContain('files touched: src/add.js');
    const result = await handle.callText('task_result', { task_id: id, include_patch: true });
    expect(result.text).toContain('Rewrote src/add.js so add() adds.');
    expect(result.text).toContain('+exports.add = (a, b) => a + b;');
    expect(git(world.project, 'show', `delegate/${id}:src/add.js`)).toContain('a + b');
    for (const request of fake!.requests) {
      expect(request.headers['x-goog-api-key']).toBe(SECRET);
      expect(request.path).toContain('/models/gemini-fake:streamGenerateContent');
    }
    const jobFiles = join(world.dataHome, 'jobs', id);
    for (const file of readdirSync(jobFiles)) {
      if (/\.(json|jsonl|log)$/.test(file)) {
        expect(readFileSync(join(jobFiles, file), 'utf8')).not.toContain(SECRET);
      }
    }
  });

  it('a rejected key ends the task failed with auth_failed', async () => {
    const handle = await startWith([
      {
        error: 400,
        status: 'INVALID_ARGUMENT',
        message: 'API key not valid. Please pass a valid API key.',
      },
    ]);
    const id = taskIdOf((await handle.callText('task_start', { task: 'Fix add()' })).text);
    await pollTaskStatus(handle, id, /failed|done|timeout|lost/, 90_000);
    const result = await handle.callText('task_result', { task_id: id });
    expect(result.text).toMatch(/error: auth_failed: /);
    expect(result.text).toContain(
      'check $GM_KEY, or store one with provider_key {"profile": "gm"}',
    );
  });

  it('a 429 ends the task as a throttle and starts the cooldown every process honours', async () => {
    const handle = await startWith([
      { error: 429, status: 'RESOURCE_EXHAUSTED', message: 'Resource has been exhausted' },
    ]);
    const id = taskIdOf((await handle.callText('task_start', { task: 'Fix add()' })).text);
    await pollTaskStatus(handle, id, /failed|done|timeout|lost/, 90_000);
    const result = await handle.callText('task_result', { task_id: id });
    expect(result.text).toMatch(/error: throttle: .*Resource has been exhausted/);
    const cooldown = JSON.parse(
      readFileSync(join(world.dataHome, 'cli-engines', 'gemini-cli.json'), 'utf8'),
    ) as { coolUntil: string };
    expect(Date.parse(cooldown.coolUntil)).toBeGreaterThan(Date.now() + 30_000);
  });

  it('every flag the engine passes is one the real binary documents', () => {
    const help = execFileSync(gemini, ['--help'], { encoding: 'utf8' });
    for (const flag of [
      '--prompt',
      '--output-format',
      '--model',
      '--approval-mode',
      '--skip-trust',
    ]) {
      expect(help).toContain(flag);
    }
    expect(help).toMatch(/"auto_edit"/);
    expect(help).toMatch(/"stream-json"/);
  });
});

describe('gemini-cli engine in the OS sandbox', () => {
  it('sandbox "required": Gemini runs sandboxed, reaches its endpoint through the proxy only, writes only the worktree', async () => {
    probe = await startEscapeProbe(world);
    // Approval mode yolo (sandboxMode "danger-full-access"), so Gemini runs shell commands at all.
    const handle = await startWith(
      [
        { call: { name: 'run_shell_command', args: { command: probe.command } } },
        { call: { name: 'write_file', args: { file_path: 'src/add.js', content: FIXED_ADD } } },
        { text: 'Rewrote src/add.js so add() adds.' },
      ],
      { sandbox: 'required', sandboxMode: 'danger-full-access' },
    );
    await expectSandboxedFix(handle, world, fake!, probe);
  });
});
