/**
 * Both protocol eras on the built server, over stdio with raw JSON-RPC lines (no SDK client, so
 * the modern era's shapes are what the test writes): a legacy client still gets every tool, a
 * modern one that declares the tasks extension gets task_start as a native task (tasks/get,
 * tasks/update, tasks/cancel on the same jobs as the task_* tools), and one that does not gets
 * today's text.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect } from 'vitest';
import { byAssistantTurn, type FakeProvider, type FakeReply } from '../helpers/fake-provider.ts';
import { FIXED_ADD } from '../helpers/git-project.ts';
import { SERVER_BUNDLE } from '../helpers/mcp-server.ts';
import { killQuietly, settleWorkers, taskProcessesLeft } from '../helpers/processes.ts';
import { taskTest } from '../helpers/task-world.ts';
import { scaledMs, settle } from '../helpers/timing.ts';
import { readLedger } from '../../server/src/calls/ledger.ts';
import { storedKey } from '../../server/src/profiles/credentials.ts';
import { hookAnswerTool } from '../../server/src/tools/hook-answer.ts';
import { TOOLS } from '../../server/src/tools/registry.ts';

const TOOL_NAMES = TOOLS.map((tool) => tool.name);
/** What tools/list holds: the model's tools and the hooks' own (kept from the model by its visibility). */
const LISTED = [...TOOL_NAMES, hookAnswerTool.name];

const MODERN = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';

/** The per-request `_meta` of a modern client, with or without the tasks extension. */
function modernMeta(withTasks: boolean): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientInfo': { name: 'raw-test', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': withTasks ? { extensions: { [TASKS]: {} } } : {},
  };
}

interface Response {
  id: number | string;
  result?: Record<string, unknown> & { content?: Array<{ text: string }>; isError?: boolean };
  error?: { code: number; message: string };
}

/** The built server over stdio, spoken to line by line. */
class RawServer {
  private nextId = 1;
  private readonly waiting = new Map<number | string, (response: Response) => void>();
  readonly lines: string[] = [];
  constructor(readonly child: ChildProcessWithoutNullStreams) {
    createInterface({ input: child.stdout }).on('line', (line) => {
      this.lines.push(line);
      const message = JSON.parse(line) as Response & { method?: string };
      if (message.method === undefined) this.waiting.get(message.id)?.(message);
    });
  }

  request(method: string, params: Record<string, unknown> = {}, id?: string): Promise<Response> {
    const requestId = id ?? this.nextId++;
    const answered = new Promise<Response>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to ${method}`)), scaledMs(30_000));
      this.waiting.set(requestId, (response) => {
        clearTimeout(timer);
        resolve(response);
      });
    });
    this.send({ jsonrpc: '2.0', id: requestId, method, params });
    return answered;
  }

  notify(method: string, params: Record<string, unknown> = {}): void {
    this.send({ jsonrpc: '2.0', method, params });
  }

  /** A modern request: the `_meta` rides in its params. */
  modern(method: string, params: Record<string, unknown>, withTasks = true): Promise<Response> {
    return this.request(method, { ...params, _meta: modernMeta(withTasks) });
  }

  private send(message: object): void {
    this.child.stdin.write(`${JSON.stringify(message)}\n`);
  }
}

const use = (name: string, input: Record<string, unknown>): FakeReply => ({
  toolUses: [{ name, input }],
});

const it = taskTest.extend('raw', ({ world }, { onCleanup }) => {
  const started: RawServer[] = [];
  onCleanup(async () => {
    for (const server of started) {
      server.child.stdin.end();
      if (server.child.pid) killQuietly(server.child.pid);
    }
    await settleWorkers(world.dataHome);
  });
  return (env: Record<string, string> = {}): RawServer => {
    const child = spawn(process.execPath, [SERVER_BUNDLE], {
      env: { ...world.env, DELEGATE_QUESTION_TIMEOUT_S: '60', ...env },
      cwd: world.project,
    });
    child.stderr.resume();
    const server = new RawServer(child);
    started.push(server);
    return server;
  };
});

/** Polls tasks/get until `done` holds for its result. */
async function pollTask(
  server: RawServer,
  taskId: string,
  done: (result: Record<string, unknown>) => boolean,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + scaledMs(30_000);
  for (;;) {
    const { result, error } = await server.modern('tasks/get', { taskId });
    expect(error).toBeUndefined();
    if (done(result!)) return result!;
    if (Date.now() > deadline)
      throw new Error(`task never matched; last: ${JSON.stringify(result)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Makes `fake` the worker profile `w`, the only one, so the default. */
function useWorker(world: { writeConfig(config: object): void }, fake: FakeProvider): void {
  world.writeConfig({
    profiles: {
      w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'worker-model', local: true },
    },
  });
}

/** task_start as a task on `server`, once its worker is waiting on `fake` (which hangs). */
async function startHungTask(server: RawServer, fake: FakeProvider): Promise<string> {
  const started = await server.modern('tools/call', {
    name: 'task_start',
    arguments: { task: 'Think forever', isolation: 'none' },
  });
  const taskId = started.result!.taskId as string;
  await pollTask(server, taskId, () => fake.requests.length > 0);
  return taskId;
}

describe('one server, both protocol eras', () => {
  it('a legacy client (initialize) lists every tool; server/discover is answered', async ({
    raw,
  }) => {
    const server = raw();
    const discover = await server.request(
      'server/discover',
      { _meta: modernMeta(true) },
      'server-discover-probe-1',
    );
    expect(discover.result).toMatchObject({
      resultType: 'complete',
      supportedVersions: [MODERN, '2025-11-25'],
      capabilities: { tools: {}, extensions: { [TASKS]: {} } },
      ttlMs: 0,
      cacheScope: 'private',
    });
    const init = await server.request('initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'legacy', version: '1' },
    });
    expect(init.result).toMatchObject({ protocolVersion: '2025-11-25' });
    expect(init.result).not.toHaveProperty('resultType');
    server.notify('notifications/initialized');
    const list = await server.request('tools/list');
    expect(list.result).not.toHaveProperty('resultType');
    const names = (list.result!.tools as Array<{ name: string }>).map((tool) => tool.name);
    expect(names.sort()).toEqual([...LISTED].sort());
  });

  it('modern requests: resultType and serverInfo on results, -32602 without clientCapabilities, -32022 for another version, -32021 for tasks/* without the extension, -32602 for an unknown task', async ({
    raw,
  }) => {
    const server = raw();
    const list = await server.modern('tools/list', {});
    expect(list.result?.resultType).toBe('complete');
    expect(list.result?._meta).toMatchObject({
      'io.modelcontextprotocol/serverInfo': { name: 'delegate-workers' },
    });
    expect((list.result!.tools as unknown[]).length).toBe(LISTED.length);
    const bare = await server.request('tools/list', {
      _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN },
    });
    expect(bare.error?.code).toBe(-32602);
    expect(bare.error?.message).toContain('clientCapabilities');
    const other = await server.request('tools/list', {
      _meta: { ...modernMeta(true), 'io.modelcontextprotocol/protocolVersion': '2099-01-01' },
    });
    expect(other.error?.code).toBe(-32022);
    const without = await server.modern('tasks/get', { taskId: 't_aaaaaa' }, false);
    expect(without.error?.code).toBe(-32021);
    const unknown = await server.modern('tasks/get', { taskId: 't_aaaaaa' });
    expect(unknown.error?.code).toBe(-32602);
  });

  it('task_start becomes a task: working → input_required → tasks/update reaches the worker → completed with the task_result text', async ({
    raw,
    world,
    provider,
  }) => {
    const fake = await provider.start({
      respond: byAssistantTurn([
        use('ask_supervisor', { question: 'Should add() also accept strings?' }),
        use('write_file', { path: 'src/add.js', content: FIXED_ADD }),
        { text: 'Fixed add().' },
      ]),
    });
    useWorker(world, fake);
    const server = raw({ DELEGATE_TASK_POLL_MS: '300' });
    const started = await server.modern('tools/call', {
      name: 'task_start',
      arguments: { task: 'Fix add()', test_command: 'node test.js' },
    });
    const task = started.result!;
    expect(task).toMatchObject({ resultType: 'task', ttlMs: null, pollIntervalMs: 300 });
    const taskId = task.taskId as string;
    expect(taskId).toMatch(/^t_[a-z0-9]{6}$/);
    expect(['working', 'input_required', 'completed']).toContain(task.status);
    expect(typeof task.createdAt).toBe('string');
    const note = (task._meta as Record<string, { modelImmediateResponse: string }>)[
      'com.anthropic/agent-task'
    ]!.modelImmediateResponse;
    expect(note).toContain(taskId);
    expect(note).toContain('preflight: node test.js → exit 1');
    // Marked native: the monitor leaves it to Claude Code.
    const jobFile = join(world.dataHome, 'jobs', taskId, 'job.json');
    expect(JSON.parse(readFileSync(jobFile, 'utf8'))).toMatchObject({ nativeTask: true });

    const asking = await pollTask(server, taskId, (result) => result.status === 'input_required');
    const requests = asking.inputRequests as Record<
      string,
      { method: string; params: { message: string; mode: string } }
    >;
    const [key] = Object.keys(requests);
    expect(requests[key!]).toMatchObject({
      method: 'elicitation/create',
      params: { mode: 'form', message: 'Should add() also accept strings?' },
    });
    // A key that is not outstanding is ignored; the real one reaches the worker.
    expect(
      (
        await server.modern('tasks/update', {
          taskId,
          inputResponses: { 'not-a-key': { action: 'accept', content: { value: 'wrong' } } },
        })
      ).result,
    ).toMatchObject({ resultType: 'complete' });
    const update = await server.modern('tasks/update', {
      taskId,
      inputResponses: { [key!]: { action: 'accept', content: { value: 'No, numbers only.' } } },
    });
    expect(update.result).toMatchObject({ resultType: 'complete' });
    // At once, the form is no longer asked for (the answer is on its way).
    expect((await server.modern('tasks/get', { taskId })).result?.status).not.toBe(
      'input_required',
    );

    const completed = await pollTask(server, taskId, (result) => result.status === 'completed');
    const result = completed.result as { content: Array<{ text: string }>; isError: boolean };
    expect(result.isError).toBe(false);
    expect(result.content[0]!.text).toContain(`${taskId} done — verdict: passed`);
    expect(result.content[0]!.text).toContain('files changed (1): M src/add.js');
    const answered = JSON.stringify(fake.requests[1]!.body.messages);
    expect(answered).toContain('No, numbers only.');
    expect(answered).not.toContain('wrong');
  });

  it('a declined question tells the worker to go on alone', async ({ raw, world, provider }) => {
    const fake = await provider.start({
      respond: byAssistantTurn([
        use('ask_supervisor', { question: 'Which colour?' }),
        { text: 'Went with blue.' },
      ]),
    });
    useWorker(world, fake);
    const server = raw({ DELEGATE_TASK_POLL_MS: '300' });
    const started = await server.modern('tools/call', {
      name: 'task_start',
      arguments: { task: 'Pick a colour', isolation: 'none' },
    });
    const taskId = started.result!.taskId as string;
    const asking = await pollTask(server, taskId, (result) => result.status === 'input_required');
    const [key] = Object.keys(asking.inputRequests as object);
    await server.modern('tasks/update', {
      taskId,
      inputResponses: { [key!]: { action: 'decline' } },
    });
    await pollTask(server, taskId, (result) => result.status === 'completed');
    expect(JSON.stringify(fake.requests[1]!.body.messages)).toContain(
      'The user declined to answer; proceed on your own judgement.',
    );
  });

  it('tasks/cancel, sent twice as Claude Code does, ends the task with no worker left', async ({
    raw,
    world,
    provider,
  }) => {
    const fake = await provider.start({ respond: () => ({ kind: 'hang' }) });
    useWorker(world, fake);
    const server = raw();
    const taskId = await startHungTask(server, fake);
    const job = JSON.parse(
      readFileSync(join(world.dataHome, 'jobs', taskId, 'job.json'), 'utf8'),
    ) as { worker: { pid: number; hosted?: boolean } };
    const [first, second] = await Promise.all([
      server.modern('tasks/cancel', { taskId }),
      server.modern('tasks/cancel', { taskId }),
    ]);
    expect(first.result).toMatchObject({ resultType: 'complete' });
    expect(second.result).toMatchObject({ resultType: 'complete' });
    // Its host (it runs the session's other tasks, and stays) let it go; nothing of it runs.
    expect(job.worker.hosted).toBe(true);
    expect(taskProcessesLeft(world.dataHome, taskId)).toEqual([]);
    const ended = (await server.modern('tasks/get', { taskId })).result!;
    expect(ended.status).toBe('cancelled');
    // Once more, after the end: still an ack.
    expect((await server.modern('tasks/cancel', { taskId })).result).toMatchObject({
      resultType: 'complete',
    });
  });

  it("a task run as attempts: the asking attempt's question is the form, its answer reaches that attempt, the winner's result completes the task", async ({
    raw,
    world,
    provider,
  }) => {
    const turns = (request: { body: { messages?: Array<{ role?: string }> } }) =>
      (request.body.messages ?? []).filter((message) => message.role === 'assistant').length;
    const fake = await provider.start({
      respond: (request) => {
        const turn = turns(request);
        if (request.body.model === 'slow')
          return { ...use('report_progress', { note: 'thinking' }), delayMs: 300 };
        if (turn === 0) return use('ask_supervisor', { question: 'Numbers only?' });
        if (turn === 1) return use('write_file', { path: 'src/add.js', content: FIXED_ADD });
        return { text: 'Fixed add().' };
      },
    });
    const profile = (model: string) => ({
      format: 'openai',
      baseUrl: fake.openaiBaseUrl,
      model,
      local: true,
    });
    world.writeConfig({ profiles: { asker: profile('asker'), slow: profile('slow') } });
    const server = raw({ DELEGATE_TASK_POLL_MS: '300' });
    const started = await server.modern('tools/call', {
      name: 'task_start',
      arguments: {
        task: 'Fix add()',
        test_command: 'node test.js',
        attempts: 2,
        attempt_profiles: ['asker', 'slow'],
      },
    });
    const taskId = started.result!.taskId as string;
    expect(started.result!.resultType).toBe('task');
    const asking = await pollTask(server, taskId, (result) => result.status === 'input_required');
    const requests = asking.inputRequests as Record<string, { params: { message: string } }>;
    expect(Object.keys(requests)).toEqual([`${taskId}a1.q1`]);
    expect(requests[`${taskId}a1.q1`]!.params.message).toContain('Numbers only?');
    await server.modern('tasks/update', {
      taskId,
      inputResponses: { [`${taskId}a1.q1`]: { action: 'accept', content: { value: 'Yes.' } } },
    });
    const completed = await pollTask(server, taskId, (result) => result.status === 'completed');
    const text = (completed.result as { content: Array<{ text: string }> }).content[0]!.text;
    expect(text).toContain(`${taskId} done — verdict: passed`);
    const answered = fake.requests.find(
      (request) => request.body.model === 'asker' && turns(request) === 1,
    );
    expect(JSON.stringify(answered!.body.messages)).toContain('Yes.');
  });

  it('a task outlives the server that started it: a new server answers tasks/get and tasks/cancel for it', async ({
    raw,
    world,
    provider,
  }) => {
    const fake = await provider.start({ respond: () => ({ kind: 'hang' }) });
    useWorker(world, fake);
    const first = raw();
    const taskId = await startHungTask(first, fake);
    first.child.stdin.end();
    await new Promise((resolve) => first.child.once('exit', resolve));
    const second = raw();
    expect((await second.modern('tasks/get', { taskId })).result?.status).toBe('working');
    await second.modern('tasks/cancel', { taskId });
    expect((await second.modern('tasks/get', { taskId })).result?.status).toBe('cancelled');
  });

  it('a modern client without the tasks extension gets task_start as today: a text result', async ({
    raw,
    world,
    provider,
  }) => {
    const fake = await provider.start({ respond: () => ({ text: 'Nothing to do.' }) });
    useWorker(world, fake);
    const server = raw();
    const started = await server.modern(
      'tools/call',
      { name: 'task_start', arguments: { task: 'Look', isolation: 'none' } },
      false,
    );
    expect(started.result?.resultType).toBe('complete');
    expect(started.result).not.toHaveProperty('taskId');
    expect(started.result!.content![0]!.text).toMatch(/^t_[a-z0-9]{6} /);
    const id = /^t_[a-z0-9]{6}/.exec(started.result!.content![0]!.text)![0];
    expect(
      JSON.parse(readFileSync(join(world.dataHome, 'jobs', id, 'job.json'), 'utf8')),
    ).not.toHaveProperty('nativeTask');
    // Bad arguments with the extension: today's validation error, not a task.
    const bad = await server.modern('tools/call', { name: 'task_start', arguments: { task: '' } });
    expect(bad.result).toMatchObject({ resultType: 'complete', isError: true });
  });
  it('provider_key on a modern connection without the tasks extension: no form (no server-to-client requests there), the no-form text instead', async ({
    raw,
    world,
  }) => {
    world.writeConfig({
      profiles: { w: { format: 'openai', baseUrl: 'http://127.0.0.1:9/v1', model: 'm' } },
    });
    const server = raw();
    // Even when the request declares form elicitation.
    const answer = await server.request('tools/call', {
      name: 'provider_key',
      arguments: { profile: 'w' },
      _meta: {
        ...modernMeta(false),
        'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
      },
    });
    expect(answer.result).toMatchObject({ resultType: 'complete', isError: true });
    expect(answer.result!.content![0]!.text).toContain(
      'This client cannot ask the user for input (no MCP elicitation)',
    );
    expect(server.lines.some((line) => line.includes('elicitation/create'))).toBe(false);
  });
});

describe('delegate, delegate_batch and provider_key as tasks (modern client with the tasks extension)', () => {
  const KEY = 'sk-native-form-0123456789abcdef';

  /** provider_key for a profile that needs a key, polled until its form is outstanding. */
  async function askForKey(server: RawServer, world: { writeConfig(config: object): void }) {
    world.writeConfig({
      profiles: { w: { format: 'openai', baseUrl: 'http://127.0.0.1:9/v1', model: 'm' } },
    });
    const started = await server.modern('tools/call', {
      name: 'provider_key',
      arguments: { profile: 'w' },
    });
    const taskId = started.result!.taskId as string;
    const asking = await pollTask(server, taskId, (result) => result.status === 'input_required');
    const [[key, request]] = Object.entries(asking.inputRequests as Record<string, any>) as [
      [string, any],
    ];
    return { started: started.result!, taskId, key, request };
  }

  it('provider_key becomes a task whose form takes the key: stored for its host, never in any answer the client gets', async ({
    raw,
    world,
  }) => {
    const server = raw({ DELEGATE_TASK_POLL_MS: '300' });
    const { started, taskId, key, request } = await askForKey(server, world);
    expect(started).toMatchObject({ resultType: 'task', status: 'working' });
    expect(taskId).toMatch(/^c_[A-Za-z0-9_-]{16}$/);
    expect(JSON.stringify(started._meta)).toContain('waiting for the user');
    expect(request).toMatchObject({
      method: 'elicitation/create',
      params: { mode: 'form', requestedSchema: { required: ['value'] } },
    });
    expect(request.params.message).toContain('http://127.0.0.1:9');
    // A key not outstanding is ignored; the right one is taken once.
    await server.modern('tasks/update', {
      taskId,
      inputResponses: { 'not-a-key': { action: 'accept', content: { value: 'wrong' } } },
    });
    expect((await server.modern('tasks/get', { taskId })).result!.status).toBe('input_required');
    const update = await server.modern('tasks/update', {
      taskId,
      inputResponses: { [key]: { action: 'accept', content: { value: KEY } } },
    });
    expect(update.result).toMatchObject({ resultType: 'complete' });
    const done = await pollTask(server, taskId, (result) => result.status === 'completed');
    expect(done.result).toMatchObject({ isError: false });
    expect(JSON.stringify(done.result)).toMatch(/stored/i);
    expect(storedKey(world.dataHome, 'w')?.key).toBe(KEY);
    expect(server.lines.join('\n')).not.toContain(KEY);
    // The form rode in tasks/get answers; the server sent the client no request of its own.
    const requests = server.lines.map((line) => JSON.parse(line) as { method?: string });
    expect(requests.filter((message) => message.method !== undefined)).toEqual([]);
  });

  it('a declined provider_key form stores nothing and completes saying so', async ({
    raw,
    world,
  }) => {
    const server = raw({ DELEGATE_TASK_POLL_MS: '300' });
    const { taskId, key } = await askForKey(server, world);
    await server.modern('tasks/update', {
      taskId,
      inputResponses: { [key]: { action: 'decline' } },
    });
    const done = await pollTask(server, taskId, (result) => result.status === 'completed');
    expect(JSON.stringify(done.result)).toContain('declined; no key was stored');
    expect(storedKey(world.dataHome, 'w')).toBeUndefined();
  });

  it('a quick delegate answers as usual; a slow one becomes a task that completes with the same answer text', async ({
    raw,
    world,
    provider,
  }) => {
    let slow = false;
    const fake = await provider.start({
      respond: () => ({ text: slow ? 'Slow answer.' : 'Quick answer.', delayMs: slow ? 1500 : 0 }),
    });
    world.writeConfig({
      profiles: { w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm', local: true } },
    });
    const server = raw({ DELEGATE_TASK_POLL_MS: '300', DELEGATE_CALL_TASK_AFTER_MS: '500' });
    const quick = await server.modern('tools/call', {
      name: 'delegate',
      arguments: { task: 'Hi' },
    });
    expect(quick.result).toMatchObject({ resultType: 'complete' });
    expect(quick.result).not.toHaveProperty('taskId');
    expect(quick.result!.content![0]!.text).toContain('Quick answer.');
    slow = true;
    const started = await server.modern('tools/call', {
      name: 'delegate',
      arguments: { task: 'Hi' },
    });
    expect(started.result).toMatchObject({ resultType: 'task', status: 'working' });
    const taskId = started.result!.taskId as string;
    expect(JSON.stringify(started.result!._meta)).toContain(`background task ${taskId}`);
    const done = await pollTask(server, taskId, (result) => result.status === 'completed');
    expect(done).toMatchObject({ result: { isError: false } });
    const text = (done.result as { content: Array<{ text: string }> }).content[0]!.text;
    expect(text).toContain('Slow answer.');
    // Same shape as the quick call's text: the answer, then the usage line.
    expect(text.replace('Slow', 'Quick').split('\n').length).toBe(
      quick.result!.content![0]!.text.split('\n').length,
    );
    // A restarted server does not know the call: the error says to make it again.
    server.child.kill();
    const next = raw();
    const gone = await next.modern('tasks/get', { taskId });
    expect(gone.error?.code).toBe(-32602);
    expect(gone.error?.message).toContain('Make the call again');
  });

  it('a slow explore becomes a task too, and completes with the answer and its usage line', async ({
    raw,
    provider,
    world,
  }) => {
    const fake = await provider.start({
      respond: () => ({ text: 'Nothing to cite: the project is empty.', delayMs: 1500 }),
    });
    world.writeConfig({
      profiles: { w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm', local: true } },
    });
    const server = raw({ DELEGATE_TASK_POLL_MS: '300', DELEGATE_CALL_TASK_AFTER_MS: '500' });
    const started = await server.modern('tools/call', {
      name: 'explore',
      arguments: { question: 'Where is anything?' },
    });
    expect(started.result).toMatchObject({ resultType: 'task', status: 'working' });
    const done = await pollTask(
      server,
      started.result!.taskId as string,
      (result) => result.status === 'completed',
    );
    const text = (done.result as { content: Array<{ text: string }> }).content[0]!.text;
    expect(text).toContain('Nothing to cite: the project is empty.');
    expect(text).toMatch(/\[explore: profile w · model m · 1 turn/);
  });

  it('tasks/cancel stops a slow delegate_batch: its calls are aborted (no answer lands after), and tasks/get says cancelled', async ({
    raw,
    world,
    provider,
  }) => {
    // Each answer comes late: a call not aborted by the cancel would land it in the ledger.
    const fake = await provider.start({ respond: () => ({ text: 'Late.', delayMs: 1_500 }) });
    world.writeConfig({
      profiles: { w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm', local: true } },
    });
    const server = raw({ DELEGATE_TASK_POLL_MS: '300', DELEGATE_CALL_TASK_AFTER_MS: '300' });
    const started = await server.modern('tools/call', {
      name: 'delegate_batch',
      arguments: { jobs: [{ task: 'One' }, { task: 'Two' }] },
    });
    const taskId = started.result!.taskId as string;
    await pollTask(server, taskId, () => fake.requests.length === 2);
    const [first, second] = await Promise.all([
      server.modern('tasks/cancel', { taskId }),
      server.modern('tasks/cancel', { taskId }),
    ]);
    expect(first.result).toMatchObject({ resultType: 'complete' });
    expect(second.result).toMatchObject({ resultType: 'complete' });
    const got = await server.modern('tasks/get', { taskId });
    expect(got.result).toMatchObject({ status: 'cancelled' });
    await settle(2_500);
    expect(readLedger(world.dataHome).filter((line) => line.outcome === 'ok')).toEqual([]);
    expect((await server.modern('tasks/get', { taskId })).result).toMatchObject({
      status: 'cancelled',
    });
    // Bad arguments: the SDK's validation error, not a task.
    const bad = await server.modern('tools/call', {
      name: 'delegate_batch',
      arguments: { jobs: [] },
    });
    expect(bad.result).toMatchObject({ resultType: 'complete', isError: true });
  });
});
