import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { byAssistantTurn, type FakeReply, type RecordedRequest } from '../helpers/fake-provider.ts';
import { CLI_BUNDLE } from '../helpers/cli-process.ts';
import { FIXED_ADD } from '../helpers/git-project.ts';
import type { ServerHandle } from '../helpers/mcp-server.ts';
import { taskTest, type TaskWorld } from '../helpers/task-world.ts';
import { pollTaskStatus, taskIdOf } from '../helpers/wait.ts';

// A fresh home (no config.json) and only a local server that lists an embedding model first.
const MODELS = ['nomic-embed-text:latest', 'qwen3-coder:30b'];
const isReview = (request: RecordedRequest) =>
  JSON.stringify(request.body.messages).includes('Grade this change');

const it = taskTest.extend(
  'startOn',
  ({ world, provider, server }) =>
    async (
      serverName: string,
      respond: (request: RecordedRequest) => FakeReply,
      capabilities?: Record<string, string[]>,
    ): Promise<ServerHandle> => {
      const fake = await provider.start({
        models: MODELS,
        respond,
        ...(capabilities ? { capabilities } : {}),
      });
      return server.start({
        ...world.env,
        DELEGATE_DISCOVERY_URLS_FOR_TEST: `${serverName}=${fake.openaiBaseUrl}`,
      });
    },
);

describe('a discovered local server, with no configuration at all', () => {
  it('delegate answers with the chat model Ollama says can chat, not the embedding model listed first', async ({
    startOn,
    provider,
  }) => {
    const handle = await startOn('Ollama', () => ({ text: 'hello from qwen' }), {
      'nomic-embed-text:latest': ['embedding'],
      'qwen3-coder:30b': ['completion', 'tools'],
    });
    const { text, isError } = await handle.callText('delegate', { task: 'Hi' });
    expect(isError, text).toBe(false);
    expect(text).toContain('hello from qwen');
    expect(text).toContain(
      'first chat model "qwen3-coder:30b"; skipped nomic-embed-text:latest: cannot chat',
    );
    expect(text).toContain('add a profile with provider_set');
    expect(provider.started!.requests.map((request) => request.body.model)).toEqual([
      'qwen3-coder:30b',
    ]);
    expect(provider.started!.unscripted).toEqual([]);

    const providers = await handle.callText('providers', {});
    expect(providers.text).toContain(
      'Chosen: qwen3-coder:30b. Skipped (cannot chat): nomic-embed-text:latest.',
    );
  });

  it('task_start with no profile runs to done on the same server and model, and its review runs there too', async ({
    startOn,
    world,
    provider,
  }) => {
    const worker = byAssistantTurn([
      { toolUses: [{ name: 'write_file', input: { path: 'src/add.js', content: FIXED_ADD } }] },
      { text: 'Fixed add().' },
    ]);
    // Not Ollama: without /api/show the name tells the embedding model apart.
    const handle = await startOn('LM Studio', (request) =>
      isReview(request) ? { text: 'VERDICT: pass\n- add() adds' } : worker(request),
    );
    const started = await handle.callText('task_start', {
      task: 'Fix add()',
      test_command: 'node test.js',
      definition_of_done: 'add() adds two numbers',
    });
    expect(started.isError, started.text).toBe(false);
    const id = taskIdOf(started.text);
    const done = await pollTaskStatus(handle, id, /done|failed|lost|timeout/);
    expect(done).toMatch(new RegExp(`^${id} done passed`));
    // What the worker was given: the server's pick, and no key.
    const job = JSON.parse(readFileSync(join(world.dataHome, 'jobs', id, 'job.json'), 'utf8'));
    expect(job.discovered).toEqual({
      server: 'LM Studio',
      format: 'openai',
      baseUrl: provider.started!.openaiBaseUrl,
      model: 'qwen3-coder:30b',
      local: true,
    });
    const result = await handle.callText('task_result', { task_id: id });
    expect(result.text).toMatch(
      /review \(local, qwen3-coder:30b\) against the definition of done — pass/,
    );
    const models = new Set(provider.started!.requests.map((request) => request.body.model));
    expect([...models]).toEqual(['qwen3-coder:30b']);
    expect(provider.started!.requests.some(isReview)).toBe(true);
  });

  it('delegate_batch and `delegate run` use it too, by default and by its name "local"', async ({
    startOn,
    world,
    provider,
  }) => {
    const handle = await startOn('LM Studio', () => ({
      text: 'batched',
    }));
    const batch = await handle.callText('delegate_batch', {
      jobs: [{ task: 'one' }, { task: 'two', profile: 'local' }],
    });
    expect(batch.isError, batch.text).toBe(false);
    expect(batch.text.match(/batched/g)).toHaveLength(2);
    const run = await runCli({ world, provider }, ['run', 'Say hi']);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain('batched');
    const models = new Set(provider.started!.requests.map((request) => request.body.model));
    expect([...models]).toEqual(['qwen3-coder:30b']);
  });
});

/** Asynchronous: the fake provider answers from this process, so it must not be blocked. */
function runCli(
  { world, provider }: Pick<TaskWorld, 'world' | 'provider'>,
  args: string[],
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI_BUNDLE, ...args], {
    env: {
      ...world.env,
      DELEGATE_DISCOVERY_URLS_FOR_TEST: `LM Studio=${provider.started!.openaiBaseUrl}`,
    },
    cwd: world.project,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdin.end('');
  return new Promise((resolve) =>
    child.on('close', (status) => resolve({ status, stdout, stderr })),
  );
}
