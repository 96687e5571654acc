/**
 * The secret canary (issues 9 and 14): a stored key (entered through the CLI) and a key in an
 * environment variable, then every tool, a task whose worker prints its environment, and the
 * CLI, against an endpoint that echoes the key it received in every form (plain, JSON-escaped,
 * URL-encoded, base64 alone and as Basic auth) in answers, thinking, the answering model's name,
 * routing headers, tool-call arguments, the models list and errors. Neither key may appear, in
 * any of those forms, anywhere but in credentials.json and the header sent to its own endpoint.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { FakeReply, RecordedRequest } from '../helpers/fake-provider.ts';
import { PLUGIN_ROOT } from '../helpers/mcp-server.ts';
import { echoForms, holdsSecret } from '../helpers/secret-forms.ts';
import { taskTest as it } from '../helpers/task-world.ts';
import type { TempEnv } from '../helpers/temp-env.ts';
import { pollTaskStatus, taskIdOf } from '../helpers/wait.ts';
import { scaledMs } from '../helpers/timing.ts';

const STORED_KEY = 'sk-stored-canary-5e4d3c2b1a09f8e7d6c5';
/** With `/` and `+`, which JSON may escape as `\/` and URLs encode. */
const ENV_KEY = 'sk-env-canary/0a1b2c+3d4e5f6a7b8c9d';
const LAUNCHER = join(PLUGIN_ROOT, 'bin', 'delegate');

const bash = (command: string): FakeReply => ({
  toolUses: [{ name: 'run_bash', input: { command } }],
});

/** The key a request carried (Bearer or x-api-key). */
const keyOf = (request: RecordedRequest) =>
  (request.headers.authorization ?? request.headers['x-api-key'] ?? '').replace(/^Bearer /, '');
/** Every echoed form of the key the request carried, as one text. */
const echoOf = (request: RecordedRequest) => echoForms(keyOf(request)).join(' \n ');

/** Replies by what the request is: a task's worker, an echoing failure, or an echoing answer. */
function respond(world: TempEnv, request: RecordedRequest): FakeReply {
  const conversation = JSON.stringify(request.body.messages ?? '');
  const echo = echoOf(request);
  if (conversation.includes('echo the key')) {
    return {
      kind: 'error',
      status: 401,
      body: { error: { message: `bad key ${STORED_KEY} / ${ENV_KEY} / ${echo}` } },
    };
  }
  const answer: FakeReply = {
    text: `ok, you sent ${echo}`,
    thinking: `the header was ${echo}`,
    model: `echo-${Buffer.from(keyOf(request)).toString('base64')}`,
    headers: { 'x-litellm-model-id': keyOf(request) },
  };
  const turns = (request.body.messages as Array<{ role: string }>).filter(
    (message) => message.role === 'assistant',
  ).length;
  if (conversation.includes('Write the echo')) {
    const steps: FakeReply[] = [writeEcho(echo), answer];
    return steps[turns] ?? { text: 'done' };
  }
  if (!conversation.includes('Print your environment')) return answer;
  const steps: FakeReply[] = [
    bash('env; cat /proc/self/environ | tr "\\0" "\\n"; cat /proc/$PPID/environ | tr "\\0" "\\n"'),
    bash(`grep -r "sk-" "$HOME" "${world.dataHome}" 2>&1 | head -20; true`),
    writeEcho(echo),
    bash(
      `echo '${encodeURIComponent(keyOf(request))}'; echo ${Buffer.from(keyOf(request)).toString('base64')}`,
    ),
    { ...answer, text: `Printed the environment; nothing else to do. ${echo}` },
  ];
  return steps[turns] ?? { text: 'done' };
}

/** A tool call whose arguments carry the key: the worker must only ever see it redacted. */
const writeEcho = (echo: string): FakeReply => ({
  toolUses: [{ name: 'write_file', input: { path: 'echo.txt', content: echo } }],
});

function cli(world: TempEnv, args: string[], input = '') {
  const result = spawnSync(LAUNCHER, args, {
    env: { ...world.env, ENV_KEY },
    cwd: world.project,
    input,
    encoding: 'utf8',
    timeout: scaledMs(60_000),
  });
  return `${result.stdout}${result.stderr}`;
}

it(
  'a stored key and an environment key appear nowhere outside credentials.json',
  async ({ world, provider, server: servers }) => {
    const fake = await provider.start({
      respond: (request) => respond(world, request),
      models: (request) => [echoOf(request), 'm', keyOf(request)],
    });
    const price = { inputPerMTok: 0.1, outputPerMTok: 0.1 };
    world.writeConfig({
      defaultProfile: 'stored',
      profiles: {
        stored: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm', price },
        fromEnv: {
          format: 'anthropic',
          baseUrl: fake.url,
          model: 'm',
          apiKeyEnv: 'ENV_KEY',
          price,
        },
      },
      budget: { dailyUsd: 5 },
    });
    const outputs: string[] = [cli(world, ['provider-key', 'stored'], `${STORED_KEY}\n`)];

    const server = await servers.start({ ...world.env, ENV_KEY });
    const call = async (tool: string, args: Record<string, unknown>) => {
      const result = await server.callText(tool, args);
      outputs.push(result.text);
      return result.text;
    };
    await call('providers', { check: true });
    await call('delegate', { task: 'hi' });
    await call('delegate', { task: 'hi', profile: 'fromEnv', write_to: 'answer.md' });
    await call('delegate', { task: 'echo the key', profile: 'stored' });
    await call('delegate', { task: 'echo the key', profile: 'fromEnv' });
    await call('delegate_batch', {
      jobs: [{ task: 'hi' }, { task: 'echo the key', profile: 'fromEnv' }],
    });
    await call('agents_list', {});
    // A task on the Anthropic-format profile whose worker writes the key it was sent.
    const echoTask = taskIdOf(
      await call('task_start', { task: 'Write the echo', profile: 'fromEnv' }),
    );
    outputs.push(await pollTaskStatus(server, echoTask, /done|failed|lost|timeout/));
    await call('task_result', { task_id: echoTask, include_patch: true });
    const started = await call('task_start', {
      task: 'Print your environment',
      test_command: 'env; node test.js',
    });
    const id = taskIdOf(started);
    await call('task_progress', { task_id: id });
    outputs.push(await pollTaskStatus(server, id, /done|failed|lost|timeout/));
    await call('task_status', {});
    await call('task_answer', { task_id: id, answer: 'thanks' });
    await call('task_result', { task_id: id, include_patch: true });
    await call('usage', {});
    await call('provider_set', { name: 'stored', use: 'canary check' });
    outputs.push(
      cli(world, ['tasks']),
      cli(world, ['usage']),
      cli(world, ['doctor']),
      cli(world, ['wait', id, '--json']),
    );
    // Every file of the data home as it is now (the task's files go with its cleanup below).
    const credentials = join(world.dataHome, 'credentials.json');
    const filesUnder = (root: string) =>
      readdirSync(root, { recursive: true, encoding: 'utf8' })
        .map((name) => join(root, name))
        .filter((path) => statSync(path).isFile() && path !== credentials)
        .map((path) => [path, readFileSync(path, 'latin1')] as const);
    const files = [...filesUnder(world.dataHome), ...filesUnder(world.project)];
    await call('task_cleanup', { task_id: id });
    await call('provider_remove', { name: 'fromEnv' });
    outputs.push(server.stderr());

    // The worker really printed its environment and searched HOME and the data home.
    const workerSaw = fake.requests
      .filter((request) => JSON.stringify(request.body).includes('Print your environment'))
      .map((request) => JSON.stringify(request.body.messages));
    expect(workerSaw.join('\n')).toContain('DELEGATE_TASK_ID');
    // Keys went out only as credentials, to their own endpoint.
    const sentKeys = fake.requests.map(
      (request) => request.headers.authorization ?? request.headers['x-api-key'],
    );
    expect(sentKeys).toContain(`Bearer ${STORED_KEY}`);
    expect(sentKeys).toContain(ENV_KEY);

    const paths = files.map(([path]) => path);
    for (const kind of ['ledger', 'events.jsonl', 'job.json', 'result.json', 'status'])
      expect(paths.some((path) => path.includes(kind))).toBe(true);
    const places = [
      ...outputs.map((text, index) => [`output ${index}`, text] as const),
      ...workerSaw.map((text, index) => [`worker request ${index}`, text] as const),
      ...files,
    ];
    const leaks = places.filter(
      ([, text]) =>
        holdsSecret(text, STORED_KEY) || holdsSecret(text, ENV_KEY) || text.includes('sk-stored'),
    );
    expect(leaks.map(([where]) => where)).toEqual([]);
    // The echoes really came back, redacted, through every path.
    const seen = outputs.join('\n');
    expect(seen).toContain('ok, you sent [redacted]');
    expect(seen).toMatch(/models: \[redacted\]/);
    expect(seen).toContain('bad key [redacted] / [redacted]');
    const answerFile = files.find(([path]) => path.endsWith('answer.md'));
    expect(answerFile?.[1]).toContain('[redacted]');
    expect(workerSaw.join('\n')).toContain('[redacted]');
    const echoFiles = files.filter(([path]) => path.endsWith('echo.txt'));
    expect(echoFiles.length).toBeGreaterThan(0);
    for (const [, text] of echoFiles) expect(text).toContain('[redacted]');
    expect(places.length).toBeGreaterThan(30);
  },
  scaledMs(120_000),
);
