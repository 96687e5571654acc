import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCliWorld, type CliWorld } from '../helpers/cli-engine-world.ts';
import {
  expectSandboxedFix,
  startEscapeProbe,
  type EscapeProbe,
} from '../helpers/cli-sandbox-probe.ts';
import {
  startFakeProvider,
  type FakeProvider,
  type FakeReply,
  type RecordedRequest,
} from '../helpers/fake-provider.ts';
import { git } from '../helpers/git-project.ts';
import { startServer, type ServerHandle } from '../helpers/mcp-server.ts';
import { endTaskTest } from '../helpers/processes.ts';
import { pollTaskStatus, taskIdOf } from '../helpers/wait.ts';
import { workerCliBinary } from '../helpers/worker-cli.ts';

const SECRET = 'sk-codex-secret-0123456789';
let world: CliWorld;
let fake: FakeProvider | undefined;
let server: ServerHandle | undefined;
let codex: string;
let probe: EscapeProbe | undefined;

beforeEach(async () => {
  codex = await workerCliBinary('codex');
  world = createCliWorld();
  world.linkBinary('codex', codex);
}, 300_000);
afterEach(async () => {
  await endTaskTest(world, server, fake, probe);
  server = undefined;
  fake = undefined;
  probe = undefined;
});

/** Codex turns: how many tool results the request already carries. */
function byToolResults(steps: FakeReply[]): (request: RecordedRequest) => FakeReply {
  return (request) => {
    const input: unknown = request.body?.input;
    const turn = Array.isArray(input)
      ? input.filter((item: { type?: string }) => item?.type === 'function_call_output').length
      : 0;
    const step = steps[turn];
    if (!step) throw new Error(`no scripted reply for turn ${turn}`);
    return step;
  };
}

async function startWith(
  respond: (request: RecordedRequest) => FakeReply,
  settings: { sandbox?: string; sandboxMode?: string } = {},
): Promise<ServerHandle> {
  fake = await startFakeProvider({ respond });
  world.writeConfig({
    ...(settings.sandbox ? { sandbox: settings.sandbox } : {}),
    profiles: {
      cx: {
        format: 'codex-cli',
        baseUrl: fake.openaiBaseUrl,
        model: 'gpt-fake',
        apiKeyEnv: 'CX_KEY',
        effort: 'low',
        ...(settings.sandboxMode ? { sandboxMode: settings.sandboxMode } : {}),
      },
    },
  });
  server = await startServer({ ...world.env, CX_KEY: SECRET });
  return server;
}

describe('codex-cli engine (the real Codex CLI against a fake Responses endpoint)', () => {
  it('start → progress → done (tests pass) → result with the patch; key only in the child env', async () => {
    const handle = await startWith(
      byToolResults([
        {
          toolUses: [
            { name: 'exec_command', input: { cmd: "sed -i 's/a - b/a + b/' src/add.js" } },
          ],
        },
        { text: 'Fixed add() in src/add.js with sed.' },
      ]),
    );
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
    expect(progress.text).toMatch(/run .*sed -i/);
    const result = await handle.callText('task_result', { task_id: id, include_patch: true });
    expect(result.text).toContain('Fixed add() in src/add.js with sed.');
    expect(result.text).toContain('+exports.add = (a, b) => a + b;');
    expect(git(world.project, 'show', `delegate/${id}:src/add.js`)).toContain('a + b');

    for (const request of fake!.requests) {
      expect(request.headers.authorization).toBe(`Bearer ${SECRET}`);
      expect(request.body.model).toBe('gpt-fake');
      expect(request.body.reasoning?.effort).toBe('low');
    }
    const jobFiles = join(world.dataHome, 'jobs', id);
    for (const file of readdirSync(jobFiles)) {
      if (/\.(json|jsonl|log)$/.test(file)) {
        expect(readFileSync(join(jobFiles, file), 'utf8')).not.toContain(SECRET);
      }
    }
  });

  it('a 401 ends the task failed with auth_failed, from Codex’s own error event', async () => {
    const handle = await startWith(() => ({
      kind: 'error',
      status: 401,
      body: {
        error: { type: 'invalid_request_error', code: 'invalid_api_key', message: 'bad key' },
      },
    }));
    const id = taskIdOf((await handle.callText('task_start', { task: 'Fix add()' })).text);
    await pollTaskStatus(handle, id, /failed|done|timeout|lost/, 90_000);
    const result = await handle.callText('task_result', { task_id: id });
    expect(result.text).toMatch(/error: auth_failed: /);
    expect(result.text).toContain(
      'check $CX_KEY, or store one with provider_key {"profile": "cx"}',
    );
  });

  it('a 429 ends the task as a throttle and starts the shared cooldown', async () => {
    const handle = await startWith(() => ({
      kind: 'error',
      status: 429,
      body: {
        error: { type: 'rate_limit_exceeded', code: 'rate_limit_exceeded', message: 'slow down' },
      },
    }));
    const id = taskIdOf((await handle.callText('task_start', { task: 'Fix add()' })).text);
    await pollTaskStatus(handle, id, /failed|done|timeout|lost/, 90_000);
    const result = await handle.callText('task_result', { task_id: id });
    expect(result.text).toMatch(/error: throttle: /);
    const cooldown = JSON.parse(
      readFileSync(join(world.dataHome, 'cli-engines', 'codex-cli.json'), 'utf8'),
    ) as { coolUntil: string };
    expect(Date.parse(cooldown.coolUntil)).toBeGreaterThan(Date.now() + 30_000);
  });

  it('every flag the engine passes is one the real binary documents', () => {
    const help = execFileSync(codex, ['exec', '--help'], { encoding: 'utf8' });
    for (const flag of [
      '--json',
      '--skip-git-repo-check',
      '--ephemeral',
      '--color',
      '--cd',
      '--model',
      '--sandbox',
      '--output-last-message',
      '--config',
    ]) {
      expect(help).toContain(flag);
    }
    expect(help).toMatch(/read-only, workspace-write, danger-full-access/);
  });
});

describe('codex-cli engine in the OS sandbox', () => {
  it('sandbox "required": Codex runs sandboxed, reaches its endpoint through the proxy only, writes only the worktree', async () => {
    probe = await startEscapeProbe(world);
    const handle = await startWith(
      byToolResults([
        { toolUses: [{ name: 'exec_command', input: { cmd: probe.command } }] },
        {
          toolUses: [
            { name: 'exec_command', input: { cmd: "sed -i 's/a - b/a + b/' src/add.js" } },
          ],
        },
        { text: 'Fixed add() in src/add.js with sed.' },
      ]),
      { sandbox: 'required' },
    );
    const id = await expectSandboxedFix(handle, world, fake!, probe);
    const job = JSON.parse(readFileSync(join(world.dataHome, 'jobs', id, 'job.json'), 'utf8'));
    expect(job).toMatchObject({ sandboxed: true, allowHosts: [new URL(fake!.url).host] });
  });

  it('sandbox "required" without bubblewrap: task_start refuses, naming what to install, before anything starts', async () => {
    world.env.DELEGATE_BWRAP_PATH_FOR_TEST = '/nonexistent';
    const handle = await startWith(() => ({ text: 'never asked' }), { sandbox: 'required' });
    const started = await handle.callText('task_start', { task: 'Fix add()' });
    expect(started.isError).toBe(true);
    expect(started.text).toContain('sandbox is "required" but the OS sandbox is not available');
    expect(started.text).toContain('apt-get install bubblewrap socat ripgrep');
    expect(fake!.requests).toHaveLength(0);
    expect(existsSync(join(world.dataHome, 'worktrees'))).toBe(false);
    expect(existsSync(join(world.dataHome, 'jobs'))).toBe(false);
  });

  it('a read-only Codex profile: refused under "required" (its own sandbox cannot nest), unsandboxed and saying so under "auto"', async () => {
    const handle = await startWith(() => ({ text: 'Nothing to change.' }), {
      sandbox: 'required',
      sandboxMode: 'read-only',
    });
    const refused = await handle.callText('task_start', { task: 'Look at add()' });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain("asks for Codex's read-only sandbox, which cannot run inside");
    expect(existsSync(join(world.dataHome, 'jobs'))).toBe(false);
    await handle.close();

    world.writeConfig({
      profiles: {
        cx: {
          format: 'codex-cli',
          baseUrl: fake!.openaiBaseUrl,
          model: 'gpt-fake',
          apiKeyEnv: 'CX_KEY',
          sandboxMode: 'read-only',
        },
      },
    });
    server = await startServer({ ...world.env, CX_KEY: SECRET });
    const id = taskIdOf((await server.callText('task_start', { task: 'Look at add()' })).text);
    expect(await pollTaskStatus(server, id, /done|failed|lost|timeout/, 90_000)).toMatch(
      new RegExp(`^${id} done .* · unsandboxed$`),
    );
    const progress = await server.callText('task_progress', { task_id: id });
    expect(progress.text).toContain(
      'sandbox: off — unsandboxed (profile "cx" asks for Codex\'s read-only sandbox',
    );
  });
});
