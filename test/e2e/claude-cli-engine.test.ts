import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readLedger } from '../../server/src/calls/ledger.ts';
import { claudeBinary } from '../helpers/claude-cli.ts';
import { createCliWorld, type CliWorld } from '../helpers/cli-engine-world.ts';
import {
  expectSandboxedFix,
  startEscapeProbe,
  type EscapeProbe,
} from '../helpers/cli-sandbox-probe.ts';
import {
  byAssistantTurn,
  startFakeProvider,
  type FakeProvider,
  type FakeReply,
  type RecordedRequest,
} from '../helpers/fake-provider.ts';
import { BROKEN_ADD_PROJECT, git } from '../helpers/git-project.ts';
import { startServer, type ServerHandle } from '../helpers/mcp-server.ts';
import { endTaskTest, liveProcesses } from '../helpers/processes.ts';
import { pollTaskStatus, taskIdOf } from '../helpers/wait.ts';

const SECRET = 'sk-cc-secret-0123456789';
let world: CliWorld;
let fake: FakeProvider | undefined;
let server: ServerHandle | undefined;
let probe: EscapeProbe | undefined;

beforeEach(async () => {
  world = createCliWorld();
  world.linkBinary('claude', await claudeBinary());
});
afterEach(async () => {
  await endTaskTest(world, server, fake, probe);
  server = undefined;
  fake = undefined;
  probe = undefined;
});

/** The directory the CLI runs in, from the output of the first step's `pwd`. */
function cwdOf(request: RecordedRequest): string {
  const text = JSON.stringify(request.body.messages);
  const match = /(\/[^"\\]*\/worktrees\/project\/t_[a-z0-9]+)/.exec(text);
  if (!match) throw new Error('no worktree path in the conversation yet');
  return match[1]!;
}

async function startWith(
  respond: (request: RecordedRequest) => FakeReply,
  settings: { sandbox?: string } = {},
): Promise<ServerHandle> {
  fake = await startFakeProvider({ respond });
  world.writeConfig({
    ...(settings.sandbox ? { sandbox: settings.sandbox } : {}),
    profiles: {
      cc: { format: 'claude-cli', baseUrl: fake.url, model: 'glm-test', apiKeyEnv: 'CC_KEY' },
    },
  });
  server = await startServer({ ...world.env, CC_KEY: SECRET });
  return server;
}

describe('claude-cli engine (the real Claude Code CLI against a fake Anthropic endpoint)', () => {
  it('start → progress → done (tests pass) → result with the patch; key only in the child env', async () => {
    const steps = (request: RecordedRequest): FakeReply[] => [
      // A model that echoes the key it was called with (prompt injection, a chatty gateway).
      {
        toolUses: [
          { name: 'Bash', input: { command: `pwd # ${SECRET}`, description: 'where am I' } },
        ],
      },
      { toolUses: [{ name: 'Read', input: { file_path: `${cwdOf(request)}/src/add.js` } }] },
      {
        toolUses: [
          {
            name: 'Edit',
            input: {
              file_path: `${cwdOf(request)}/src/add.js`,
              old_string: 'a - b',
              new_string: 'a + b',
            },
          },
        ],
      },
      { text: `Fixed add() in src/add.js; it now adds. Called with ${SECRET}.` },
    ];
    const handle = await startWith((request) => byAssistantTurn(steps(request))(request));
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
    expect(progress.text).toContain('files touched: src/add.js');
    expect(progress.text).toMatch(/Edit .*src\/add\.js/);

    const result = await handle.callText('task_result', { task_id: id, include_patch: true });
    expect(result.text).toContain(`${id} done — verdict: passed`);
    expect(result.text).toContain('Fixed add() in src/add.js');
    expect(result.text).toContain('Called with [redacted].');
    expect(result.text).not.toContain(SECRET);
    expect(result.text).toContain('+exports.add = (a, b) => a + b;');
    expect(git(world.project, 'show', `delegate/${id}:src/add.js`)).toContain('a + b');
    expect(readFileSync(join(world.project, 'src/add.js'), 'utf8')).toBe(
      BROKEN_ADD_PROJECT['src/add.js'],
    );

    // Every model call went to the fake with the profile's key and model.
    expect(fake!.requests.length).toBeGreaterThanOrEqual(4);
    for (const request of fake!.requests) {
      expect(request.headers['x-api-key']).toBe(SECRET);
      expect(request.body.model).toBe('glm-test');
    }
    // The key is in no task file (job, events, worker log, result), though the model echoed it.
    expect(readFileSync(join(world.dataHome, 'jobs', id, 'events.jsonl'), 'utf8')).toContain(
      '[redacted]',
    );
    const jobFiles = join(world.dataHome, 'jobs', id);
    for (const file of readdirSync(jobFiles)) {
      if (file.endsWith('.json') || file.endsWith('.jsonl') || file.endsWith('.log')) {
        expect(readFileSync(join(jobFiles, file), 'utf8')).not.toContain(SECRET);
      }
    }
  });
});

describe('claude-cli engine in the OS sandbox', () => {
  it('sandbox "required": Claude Code runs sandboxed, reaches its endpoint through the proxy only, writes only the worktree', async () => {
    probe = await startEscapeProbe(world);
    const command = probe.command;
    const handle = await startWith(
      byAssistantTurn([
        { toolUses: [{ name: 'Bash', input: { command, description: 'try' } }] },
        {
          toolUses: [
            {
              name: 'Bash',
              input: { command: "sed -i 's/a - b/a + b/' src/add.js", description: 'fix' },
            },
          ],
        },
        { text: 'Fixed add() in src/add.js.' },
      ]),
      { sandbox: 'required' },
    );
    await expectSandboxedFix(handle, world, fake!, probe);
  });
});

describe('claude-cli engine fix rounds', () => {
  it('a failing test run goes back to a new CLI run with its output, until green', async () => {
    const fixSteps = (request: RecordedRequest): FakeReply[] => [
      { toolUses: [{ name: 'Bash', input: { command: 'pwd', description: 'where am I' } }] },
      { toolUses: [{ name: 'Read', input: { file_path: `${cwdOf(request)}/src/add.js` } }] },
      {
        toolUses: [
          {
            name: 'Edit',
            input: {
              file_path: `${cwdOf(request)}/src/add.js`,
              old_string: 'a - b',
              new_string: 'a + b',
            },
          },
        ],
      },
      { text: 'Now add() adds; node test.js passes.' },
    ];
    const handle = await startWith((request) =>
      JSON.stringify(request.body.messages).includes('failed with exit code 1')
        ? byAssistantTurn(fixSteps(request))(request)
        : byAssistantTurn([{ text: 'Done, I think.' }])(request),
    );
    const started = await handle.callText('task_start', {
      task: 'Fix add() so node test.js passes',
      test_command: 'node test.js',
    });
    const id = taskIdOf(started.text);
    await pollTaskStatus(handle, id, /done|failed|lost|timeout/, 90_000);
    const result = await handle.callText('task_result', { task_id: id });
    expect(result.text).toContain(`${id} done — verdict: passed`);
    expect(result.text).toContain('fix rounds: the tests failed 1 time before (exit 1)');
    expect(result.text).toContain('Now add() adds; node test.js passes.');
    // The second run was told what failed.
    const fixRun = fake!.requests.find((request) =>
      JSON.stringify(request.body.messages).includes('failed with exit code'),
    );
    expect(JSON.stringify(fixRun?.body.messages)).toContain('add(2, 3) should be 5');
    // One ledger line per CLI run, with the cost it reported; the task's cost is their sum.
    const runs = readLedger(world.dataHome).filter((record) => record.taskId === id);
    expect(runs.map((record) => [record.format, record.outcome])).toEqual([
      ['claude-cli', 'ok'],
      ['claude-cli', 'ok'],
    ]);
    const job = JSON.parse(readFileSync(join(world.dataHome, 'jobs', id, 'job.json'), 'utf8'));
    const total = runs.reduce((sum, record) => sum + record.costUsd, 0);
    expect(total).toBeGreaterThan(0);
    expect(job.costUsd).toBeCloseTo(total, 9);
  });
});

describe('claude-cli engine failures and controls', () => {
  it('a 401 from the endpoint ends the task failed with auth_failed and the login to run', async () => {
    const handle = await startWith(() => ({
      kind: 'error',
      status: 401,
      body: {
        type: 'error',
        error: { type: 'authentication_error', message: 'invalid x-api-key' },
      },
    }));
    const started = await handle.callText('task_start', { task: 'Fix add()' });
    const id = taskIdOf(started.text);
    await pollTaskStatus(handle, id, /failed|done|timeout|lost/, 60_000);
    const result = await handle.callText('task_result', { task_id: id });
    expect(result.text).toMatch(/error: auth_failed: .*401/);
    expect(result.text).toContain(
      'check $CC_KEY, or store one with provider_key {"profile": "cc"}',
    );
    expect(fake!.requests).toHaveLength(1);
  });

  it('a throttle starts a cooldown that a task of another server process waits out', async () => {
    let throttled = 0;
    const handle = await startWith((request) => {
      // The first call and the CLI's two retries.
      if (throttled < 3) {
        throttled += 1;
        return {
          kind: 'error',
          status: 429,
          body: { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } },
        };
      }
      return byAssistantTurn([{ text: 'Nothing to change.' }])(request);
    });
    await handle.close();
    const env = { ...world.env, CC_KEY: SECRET, DELEGATE_CLI_COOLDOWN_S: '4' };
    server = await startServer(env);
    const first = taskIdOf((await server.callText('task_start', { task: 'One' })).text);
    await pollTaskStatus(server, first, /failed|done|timeout|lost/, 60_000);
    const firstResult = await server.callText('task_result', { task_id: first });
    expect(firstResult.text).toMatch(/throttle: .*slow down/);
    const throttledAt = fake!.requests[2]!.receivedAt;
    const cooldown = JSON.parse(
      readFileSync(join(world.dataHome, 'cli-engines', 'claude-cli.json'), 'utf8'),
    ) as { coolUntil: string };
    expect(Date.parse(cooldown.coolUntil)).toBeGreaterThan(Date.now());

    // A second MCP server process (another Claude Code session) starts a task at once.
    const other = await startServer(env);
    try {
      const second = taskIdOf((await other.callText('task_start', { task: 'Two' })).text);
      await pollTaskStatus(other, second, /cooling down after a throttle/, 10_000);
      await pollTaskStatus(other, second, /done|failed|timeout|lost/, 60_000);
      expect(fake!.requests).toHaveLength(4);
      expect(fake!.requests[3]!.receivedAt).toBeGreaterThanOrEqual(
        Math.min(Date.parse(cooldown.coolUntil), throttledAt + 4_000) - 50,
      );
    } finally {
      await other.close();
    }
  });

  it('a missing binary is refused at task_start, naming the npm package, before any worktree', async () => {
    world.env.PATH = '/usr/bin:/bin';
    fake = await startFakeProvider({ respond: [] });
    world.writeConfig({
      profiles: {
        cc: { format: 'claude-cli', baseUrl: fake.url, model: 'm', apiKeyEnv: 'CC_KEY' },
      },
    });
    server = await startServer({
      ...world.env,
      PATH: `${process.execPath.replace(/\/node$/, '')}:/usr/bin:/bin`,
    });
    const started = await server.callText('task_start', { task: 'Fix add()' });
    expect(started.isError).toBe(true);
    expect(started.text).toContain('npm install -g @anthropic-ai/claude-code');
    expect(() => readdirSync(join(world.dataHome, 'worktrees'))).toThrow();
    expect(() => readdirSync(join(world.dataHome, 'jobs'))).toThrow();
  });

  it('task_cancel kills the CLI and every process it started: no survivors in /proc', async () => {
    const handle = await startWith(
      byAssistantTurn([
        {
          toolUses: [
            // Claude Code refuses a plain long `sleep`; tail never ends either.
            {
              name: 'Bash',
              input: { command: 'tail -f /dev/null & tail -f /dev/null', description: 'wait' },
            },
          ],
        },
      ]),
    );
    const id = taskIdOf((await handle.callText('task_start', { task: 'Wait a while' })).text);
    await pollTaskStatus(handle, id, /Bash tail -f/, 60_000);
    await waitForProcesses(id, (pids) => pids.length >= 3);
    const cancelled = await handle.callText('task_cancel', { task_id: id });
    expect(cancelled.isError, cancelled.text).toBe(false);
    await pollTaskStatus(handle, id, /cancelled/, 10_000);
    await waitForProcesses(id, (pids) => pids.length === 0);
    expect(
      liveProcesses((facts) => facts.commandLine.startsWith('tail -f /dev/null')).filter((pid) =>
        readFileSync(`/proc/${pid}/environ`, 'latin1').includes(world.dataHome),
      ),
    ).toEqual([]);
  });

  it('a CLI that goes silent is killed at the idle timeout, with its processes; the task ends timeout', async () => {
    fake = await startFakeProvider({ respond: () => ({ kind: 'hang' }) });
    world.writeConfig({
      profiles: {
        cc: { format: 'claude-cli', baseUrl: fake.url, model: 'm', apiKeyEnv: 'CC_KEY' },
      },
    });
    server = await startServer({ ...world.env, CC_KEY: SECRET, DELEGATE_CLI_IDLE_TIMEOUT_S: '3' });
    const id = taskIdOf((await server.callText('task_start', { task: 'Anything' })).text);
    await pollTaskStatus(server, id, /timeout|failed|done|lost/, 30_000);
    const result = await server.callText('task_result', { task_id: id });
    expect(result.text).toContain(`${id} timeout`);
    expect(result.text).toMatch(/idle timeout: claude printed nothing for 3 s/);
    await waitForProcesses(id, (pids) => pids.length === 0);
  });
});

/** Processes carrying the task's id in their environment, read from /proc. */
function processesOf(id: string): number[] {
  return liveProcesses(({ pid }) => {
    try {
      return readFileSync(`/proc/${pid}/environ`, 'latin1')
        .split('\0')
        .includes(`DELEGATE_TASK_ID=${id}`);
    } catch {
      return false;
    }
  });
}

async function waitForProcesses(id: string, isWanted: (pids: number[]) => boolean): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!isWanted(processesOf(id))) {
    if (Date.now() > deadline)
      throw new Error(`task ${id} processes: ${processesOf(id).join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
