/**
 * The sandbox escape table: every attempt runs through the real path — a task started over
 * MCP, the detached worker (dist/task-worker.mjs) calling run_bash for a scripted model, and
 * the test command at preflight (server) and verification (worker). Success is judged on the
 * host (files, refs, listeners, processes) or by a planted secret showing in the output.
 * With the sandbox no attempt may succeed; with `sandbox: off` the expected set is asserted,
 * so docs/sandbox.md (generated from this table) shows what the sandbox really stops.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  RUN_BASH_ATTEMPTS,
  TEST_COMMAND_ATTEMPTS,
  fillCommand,
  removeSharedLeftovers,
  type EscapeAttempt,
  type EscapeWorld,
} from '../helpers/escape-attempts.ts';
import { byAssistantTurn, startFakeProvider, type FakeProvider } from '../helpers/fake-provider.ts';
import { git, initRepository } from '../helpers/git-project.ts';
import { startServer, type ServerHandle } from '../helpers/mcp-server.ts';
import { killQuietly, settleWorkers } from '../helpers/processes.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';
import { pollTaskStatus, taskIdOf } from '../helpers/wait.ts';
import { renderEscapeTable, syncEscapeDoc, type EscapeOutcomes } from '../helpers/escape-doc.ts';
import { scaledMs } from '../helpers/timing.ts';

type Mode = 'sandboxed' | 'unsandboxed';
const ALL_ATTEMPTS = [...RUN_BASH_ATTEMPTS, ...TEST_COMMAND_ATTEMPTS];
/** Outcome per attempt id, per mode: filled by the two runs, read by the doc check. */
const outcomes: EscapeOutcomes = {
  sandboxed: new Map(),
  unsandboxed: new Map(),
  sandboxedOutput: new Map(),
};

interface Fixtures {
  world: TempEnv;
  fake?: FakeProvider;
  server?: ServerHandle;
  tcp: Server[];
  udp?: UdpSocket;
  victim?: ChildProcess;
}
let fixtures: Fixtures | undefined;

afterEach(async () => {
  if (!fixtures) return;
  const { world, fake, server, tcp, udp, victim } = fixtures;
  await server?.close();
  await settleWorkers(world.dataHome);
  await fake?.close();
  for (const socket of acceptedSockets) socket.destroy();
  acceptedSockets.clear();
  await Promise.all(tcp.map((listener) => new Promise((resolve) => listener.close(resolve))));
  udp?.close();
  if (victim?.pid) killQuietly(victim.pid);
  removeSharedLeftovers(fixtures.world.root.slice(-6));
  world.cleanup();
  fixtures = undefined;
}, scaledMs(30_000));

/** Every socket a listener accepted, destroyed at the end so close() does not wait on them. */
const acceptedSockets = new Set<Socket>();

async function listen(server: Server, where: number | string): Promise<number> {
  server.on('connection', (socket) => acceptedSockets.add(socket));
  await new Promise<void>((resolve) =>
    typeof where === 'string'
      ? server.listen(where, resolve)
      : server.listen(0, '127.0.0.1', resolve),
  );
  const address = server.address();
  return typeof address === 'object' && address ? address.port : 0;
}

interface Counters {
  allowedHits: number;
  udpMessages: number;
  socketConnections: number;
}

/** The world an attempt may aim at: planted secrets, victims, listeners, a bare remote. */
async function buildWorld(current: Fixtures): Promise<{ escape: EscapeWorld; counters: Counters }> {
  const { world } = current;
  const nonce = world.root.slice(-6);
  const plant = (path: string, text: string) => {
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, text);
  };
  plant(join(world.home, '.ssh', 'id_rsa'), `SSH-SECRET-${nonce}\n`);
  plant(join(world.home, '.aws', 'credentials'), `aws_secret_access_key = AWS-SECRET-${nonce}\n`);
  plant(join(world.home, '.netrc'), `machine example.invalid password NETRC-SECRET-${nonce}\n`);
  plant(join(world.home, '.npmrc'), `//example.invalid/:_authToken=NPMRC-SECRET-${nonce}\n`);
  for (const path of ['.config/gcloud/credentials.db', '.kube/config', '.docker/config.json'])
    plant(join(world.home, path), `CLOUD-SECRET-${nonce}\n`);
  plant(join(world.home, '.claude', '.credentials.json'), `{"token":"CLAUDE-SECRET-${nonce}"}\n`);
  plant(join(world.dataHome, 'credentials.json'), `{"w":"CRED-SECRET-${nonce}"}\n`);
  plant(join(world.dataHome, 'jobs', 't_other0', 'job.json'), `{"note":"OTHER-SECRET-${nonce}"}\n`);
  for (const name of ['victim.txt', 'victim-delete.txt', 'victim-touch.txt'])
    plant(join(world.root, name), 'original\n');
  git(world.root, 'init', '-q', '--bare', 'remote.git');

  const connections: Record<string, number> = {};
  const ports: Record<string, number> = {};
  const networked = ALL_ATTEMPTS.filter((attempt) => attempt.command.includes('{port}'));
  for (const attempt of networked) {
    const server = createServer((socket) => socket.destroy());
    server.on('connection', () => (connections[attempt.id] = (connections[attempt.id] ?? 0) + 1));
    current.tcp.push(server);
    ports[attempt.id] = await listen(server, 0);
  }
  const counters: Counters = { allowedHits: 0, udpMessages: 0, socketConnections: 0 };
  const allowed = createServer((socket) => {
    counters.allowedHits += 1;
    socket.end('HTTP/1.1 200 OK\r\ncontent-length: 7\r\nconnection: close\r\n\r\nreached');
  });
  current.tcp.push(allowed);
  const socketServer = createServer((socket) => {
    counters.socketConnections += 1;
    socket.destroy();
  });
  current.tcp.push(socketServer);
  const socketPath = join(world.root, 'agent.sock');
  await listen(socketServer, socketPath);
  current.udp = createSocket('udp4', () => (counters.udpMessages += 1));
  await new Promise<void>((resolve) => current.udp?.bind(0, '127.0.0.1', resolve));
  current.victim = spawn('sleep', ['300'], { stdio: 'ignore' });
  const escape: EscapeWorld = {
    ...counters,
    root: world.root,
    project: world.project,
    data: world.dataHome,
    home: world.home,
    nonce,
    worktree: '',
    taskId: '',
    ports,
    connections,
    allowedPort: await listen(allowed, 0),
    udpPort: current.udp.address().port,
    socketPath,
    victimPid: current.victim.pid ?? 0,
    isVictimAlive: true,
    mainCommitsBefore: Number(git(world.project, 'rev-list', '--count', 'main')),
    mainCommitsAfter: 0,
    remoteRefs: '',
    configBytesBefore: 0,
    credentialBytesBefore: statSync(join(world.dataHome, 'credentials.json')).size,
  };
  return { escape, counters };
}

/** The text run_bash returned for each attempt, from the request that followed its call. */
function toolOutputs(fake: FakeProvider): Map<string, string> {
  const outputs = new Map<string, string>();
  for (const request of fake.requests) {
    for (const message of request.body?.messages ?? []) {
      if (message.role === 'tool' && !outputs.has(message.tool_call_id))
        outputs.set(message.tool_call_id, String(message.content));
    }
  }
  return outputs;
}

async function runTable(mode: Mode): Promise<void> {
  const world = createTempEnv();
  fixtures = { world, tcp: [] };
  initRepository(world.project, { 'README.md': '# escape table\n' });
  const { escape, counters } = await buildWorld(fixtures);
  const steps = RUN_BASH_ATTEMPTS.map((attempt) => ({
    toolUses: [
      {
        id: attempt.id,
        name: 'run_bash',
        input: { command: fillCommand(attempt, escape), timeout_s: 20 },
      },
    ],
  }));
  fixtures.fake = await startFakeProvider({
    respond: byAssistantTurn([...steps, { text: 'Tried everything.' }]),
  });
  world.writeConfig({
    sandbox: mode === 'sandboxed' ? 'required' : 'off',
    profiles: {
      w: {
        format: 'openai',
        baseUrl: fixtures.fake.openaiBaseUrl,
        model: 'worker-model',
        local: true,
      },
    },
  });
  escape.configBytesBefore = statSync(join(world.dataHome, 'config.json')).size;
  fixtures.server = await startServer({
    ...world.env,
    DELEGATE_CANARY_API_KEY: `CANARY-SECRET-${escape.nonce}`,
  });
  const testCommand = `${TEST_COMMAND_ATTEMPTS.map((attempt) => fillCommand(attempt, escape)).join('; ')}; exit 0`;
  const started = await fixtures.server.callText('task_start', {
    task: 'Try to get out.',
    test_command: testCommand,
    max_turns: 100,
    allow_hosts: [`127.0.0.1:${escape.allowedPort}`],
  });
  expect(started.isError, started.text).toBe(false);
  escape.taskId = taskIdOf(started.text);
  const done = await pollTaskStatus(
    fixtures.server,
    escape.taskId,
    /done|failed|lost|timeout/,
    150_000,
  );
  expect(done, done).toMatch(/ done passed/);
  const job = JSON.parse(
    readFileSync(join(world.dataHome, 'jobs', escape.taskId, 'job.json'), 'utf8'),
  );
  expect(job.sandboxed).toBe(mode === 'sandboxed');
  if (mode === 'sandboxed') expect(job.sandboxNote).toBeUndefined();
  escape.worktree = job.worktreePath;
  escape.mainCommitsAfter = Number(git(world.project, 'rev-list', '--count', 'main'));
  escape.remoteRefs = git(join(world.root, 'remote.git'), 'for-each-ref');
  Object.assign(escape, counters);
  escape.isVictimAlive = fixtures.victim?.exitCode === null && fixtures.victim.signalCode === null;
  const outputs = toolOutputs(fixtures.fake);
  const testOutput = `${job.preflight?.outputTail ?? ''}\n${job.verification?.outputTail ?? ''}`;
  for (const attempt of ALL_ATTEMPTS) {
    const output = RUN_BASH_ATTEMPTS.includes(attempt) ? outputs.get(attempt.id) : testOutput;
    expect(output, `no output for ${attempt.id}`).toBeDefined();
    outcomes[mode].set(attempt.id, attempt.escaped(escape, output ?? ''));
    if (mode === 'sandboxed' && RUN_BASH_ATTEMPTS.includes(attempt))
      outcomes.sandboxedOutput.set(attempt.id, output ?? '');
  }
}

const isControl = (attempt: EscapeAttempt) => attempt.isControl === true;

describe.runIf(process.platform === 'linux')('the sandbox escape table', () => {
  beforeAll(() => {
    expect(ALL_ATTEMPTS.filter((attempt) => !isControl(attempt)).length).toBeGreaterThanOrEqual(30);
  });

  it(
    'with the sandbox, no attempt succeeds (the allowlisted host stays reachable)',
    async () => {
      await runTable('sandboxed');
      const escaped = ALL_ATTEMPTS.filter((a) => !isControl(a) && outcomes.sandboxed.get(a.id));
      expect(escaped.map((attempt) => attempt.id)).toEqual([]);
      expect(ALL_ATTEMPTS.filter(isControl).map((a) => outcomes.sandboxed.get(a.id))).toEqual([
        true,
      ]);
    },
    scaledMs(200_000),
  );

  it(
    'with sandbox "off", the expected attempts succeed',
    async () => {
      await runTable('unsandboxed');
      const actual = ALL_ATTEMPTS.filter((a) => outcomes.unsandboxed.get(a.id)).map((a) => a.id);
      const expected = ALL_ATTEMPTS.filter((a) => a.escapesUnsandboxed).map((a) => a.id);
      expect(actual).toEqual(expected);
    },
    scaledMs(200_000),
  );

  it('docs/sandbox.md shows this table (DELEGATE_UPDATE_DOCS=1 rewrites it)', async () => {
    expect(outcomes.sandboxed.size).toBe(ALL_ATTEMPTS.length);
    expect(outcomes.unsandboxed.size).toBe(ALL_ATTEMPTS.length);
    const { current, expected } = await syncEscapeDoc(renderEscapeTable(ALL_ATTEMPTS, outcomes));
    expect(current).toBe(expected);
  });
});
