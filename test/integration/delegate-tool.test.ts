import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { postToolUse, runHook } from '../helpers/hook.ts';
import type { ServerHandle } from '../helpers/mcp-server.ts';
import { taskTest } from '../helpers/task-world.ts';
import { CLOSED_URL, makeLog, type TempEnv } from '../helpers/temp-env.ts';
import { scaledMs } from '../helpers/timing.ts';

const it = taskTest.extend(
  'withOpenAiWorker',
  ({ world, provider, server }) =>
    async (text = 'The worker answer.'): Promise<ServerHandle> => {
      const fake = await provider.start({ respond: () => ({ text, model: 'qwen-test' }) });
      world.writeConfig({
        defaultProfile: 'local',
        profiles: {
          local: {
            format: 'openai',
            baseUrl: fake.openaiBaseUrl,
            model: 'qwen-test',
            local: true,
            use: 'tests',
          },
        },
      });
      return server.start(world.env);
    },
);
it.override('repository', null);

describe('delegate over stdio', () => {
  it('sends every byte of the files to the worker and returns a small answer with a usage line', async ({
    withOpenAiWorker,
    world,
    provider,
  }) => {
    const log = makeLog(300 * 1024);
    world.writeProjectFile('logs/big.log', log);
    const server = await withOpenAiWorker('One ERROR: disk full on /var/data at 04:00.');
    const { text, isError } = await server.callText('delegate', {
      task: 'List the errors',
      files: ['logs/big.log'],
    });
    expect(isError).toBe(false);
    expect(text).toContain('One ERROR: disk full on /var/data at 04:00.');
    expect(text).toMatch(
      /\[delegate: profile local · model qwen-test · [\d,]+ in \/ [\d,]+ out tokens · [\d.]+ s · sent 300\.0 KB from 1 file\]/,
    );
    expect(text.length).toBeLessThan(3 * 1024);
    const request = provider.started!.requests[0]!;
    const prompt = request.body.messages
      .map((message: { content: string }) => message.content)
      .join('\n');
    expect(prompt).toContain(log);
    expect(prompt).toContain('<file path="logs/big.log" bytes="307200">');
    expect(request.body.stream).toBe(true);
    expect(request.body.model).toBe('qwen-test');
  });

  it('expands globs under the project and sends each file once', async ({
    withOpenAiWorker,
    world,
    provider,
  }) => {
    world.writeProjectFile('src/a.ts', 'export const a = 1;\n');
    world.writeProjectFile('src/b.ts', 'export const b = 2;\n');
    world.writeProjectFile('src/c.md', 'not matched\n');
    const server = await withOpenAiWorker();
    const { text, isError } = await server.callText('delegate', {
      task: 'Summarise',
      files: ['src/*.ts', 'src/a.ts'],
    });
    expect(isError).toBe(false);
    expect(text).toContain('from 2 files');
    const prompt = JSON.stringify(provider.started!.requests[0]!.body);
    expect(prompt).toContain('export const a = 1;');
    expect(prompt).toContain('export const b = 2;');
    expect(prompt).not.toContain('not matched');
  });

  it("sends an output the output guard saved (the digest's suggestion), and nothing else of the data home", async ({
    withOpenAiWorker,
    world,
    provider,
  }) => {
    const output = makeLog(40 * 1024, 'ERROR checkout failed for order 77');
    const hook = runHook(
      'post-tool-use.sh',
      postToolUse('Bash', { command: 'npm test' }, { stdout: output, stderr: '' }, world.project),
      world.env,
    );
    const saved = /saved in (\S+);/.exec(
      hook.json.hookSpecificOutput.updatedToolOutput.stdout,
    )![1]!;
    const server = await withOpenAiWorker('The checkout of order 77 failed.');
    const sent = await server.callText('delegate', { task: 'Why did it fail?', files: [saved] });
    expect(sent.isError).toBe(false);
    const prompt = JSON.stringify(provider.started!.requests[0]!.body);
    expect(prompt).toContain('ERROR checkout failed for order 77');
    expect(prompt).toContain('saved-outputs/');

    const outputs = join(world.dataHome, 'outputs');
    writeFileSync(join(world.dataHome, 'credentials.json'), '{"profiles":{}}');
    symlinkSync(join(world.dataHome, 'credentials.json'), join(outputs, 'link.txt'));
    mkdirSync(join(outputs, 'nested'));
    writeFileSync(join(outputs, 'nested', 'x.txt'), 'x');
    for (const path of [
      join(world.dataHome, 'credentials.json'),
      join(world.dataHome, 'config.json'),
      join(outputs, 'link.txt'),
      join(outputs, 'nested', 'x.txt'),
    ]) {
      const refused = await server.callText('delegate', { task: 'x', files: [path] });
      expect(refused.isError, path).toBe(true);
      expect(refused.text).toContain('outside the project');
    }
    expect(provider.started!.requests).toHaveLength(1);
  });

  it('writes the answer to write_to and returns only a preview, the path and the size', async ({
    withOpenAiWorker,
    world,
  }) => {
    const server = await withOpenAiWorker('line one\n' + 'y'.repeat(5000));
    const { text, isError } = await server.callText('delegate', {
      task: 'Draft',
      write_to: 'out/answer.md',
    });
    expect(isError).toBe(false);
    const target = join(world.project, 'out', 'answer.md');
    expect(readFileSync(target, 'utf8')).toBe('line one\n' + 'y'.repeat(5000));
    expect(text).toContain(`Wrote the answer to ${target} (4.9 KB, 2 lines)`);
    expect(text.length).toBeLessThan(1200);
  });

  it('spills a long answer to a file under the data home instead of the supervisor context', async ({
    withOpenAiWorker,
    world,
  }) => {
    const server = await withOpenAiWorker('z'.repeat(20_000));
    const { text } = await server.callText('delegate', { task: 'Long' });
    const path = /the whole of it is in (\S+)\./.exec(text)?.[1];
    expect(path?.startsWith(join(world.dataHome, 'results'))).toBe(true);
    expect(readFileSync(path!, 'utf8')).toBe('z'.repeat(20_000));
    expect(text.length).toBeLessThan(1200);
  });

  it('speaks the Anthropic format to an anthropic profile, with the key from the named variable', async ({
    world,
    provider,
    server: servers,
  }) => {
    const fake = await provider.start({
      respond: () => ({ text: 'Anthropic answer', thinking: 'hmm' }),
    });
    world.writeConfig({
      profiles: {
        code: {
          format: 'anthropic',
          baseUrl: fake.url,
          model: 'glm-test',
          apiKeyEnv: 'TEST_WORKER_KEY',
        },
      },
    });
    const server = await servers.start({ ...world.env, TEST_WORKER_KEY: 'sk-test-123' });
    const { text, isError } = await server.callText('delegate', {
      task: 'Hi',
      max_output_tokens: 77,
    });
    expect(isError).toBe(false);
    expect(text).toContain('Anthropic answer');
    expect(text).not.toContain('hmm');
    const request = fake.requests[0]!;
    expect(request.pathname).toBe('/v1/messages');
    expect(request.headers['x-api-key']).toBe('sk-test-123');
    expect(request.headers['anthropic-version']).toBe('2023-06-01');
    expect(request.body.max_tokens).toBe(77);
  });

  it('reports who answered when the endpoint routed to another model', async ({
    world,
    provider,
    server: servers,
  }) => {
    const fake = await provider.start({ respond: () => ({ text: 'ok', model: 'gpt-routed' }) });
    world.writeConfig({
      profiles: { gw: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'asked-model' } },
    });
    const server = await servers.start(world.env);
    const { text } = await server.callText('delegate', { task: 'Hi' });
    expect(text).toContain('model asked-model (answered by gpt-routed: NOT the model asked for)');
  });

  it('uses the environment-only profile', async ({ world, provider, server: servers }) => {
    const fake = await provider.start({ respond: () => ({ text: 'env answer' }) });
    const server = await servers.start({
      ...world.env,
      DELEGATE_BASE_URL: fake.openaiBaseUrl,
      DELEGATE_MODEL: 'env-model',
      DELEGATE_API_KEY_ENV: 'ENV_KEY',
      ENV_KEY: 'sk-env',
    });
    const { text, isError } = await server.callText('delegate', { task: 'Hi' });
    expect(isError).toBe(false);
    expect(text).toContain('profile env · model env-model');
    expect(fake.requests[0]!.headers.authorization).toBe('Bearer sk-env');
  });

  it('with no configuration, uses the first model of a local server found on the usual ports', async ({
    world,
    provider,
    server: servers,
  }) => {
    const fake = await provider.start({
      models: ['llama3.2:3b', 'other'],
      respond: () => ({ text: 'found you' }),
    });
    const server = await servers.start({
      ...world.env,
      DELEGATE_DISCOVERY_URLS_FOR_TEST: `Ollama=${CLOSED_URL},LM Studio=${fake.openaiBaseUrl}`,
    });
    const { text, isError } = await server.callText('delegate', { task: 'Hi' });
    expect(isError).toBe(false);
    expect(text).toContain('found you');
    expect(text).toContain(
      `LM Studio found at ${fake.openaiBaseUrl}, first chat model "llama3.2:3b"`,
    );
    expect(fake.requests[0]!.body.model).toBe('llama3.2:3b');
  });
});

describe('delegate errors are clear isError results', () => {
  const cases: Array<{
    name: string;
    setup(world: TempEnv): Record<string, unknown>;
    expected: RegExp;
  }> = [
    {
      name: 'no profile and no local server',
      setup: (world) => {
        rmSync(join(world.dataHome, 'config.json'));
        return { task: 'x' };
      },
      expected:
        /No worker is configured and no local model server answered on the usual ports \(Ollama 11434, LM Studio 1234, llama\.cpp 8080, vLLM 8000, LiteLLM 4000\)\. Either start one, e\.g\. `ollama serve`.*config\.json/,
    },
    {
      name: 'unknown profile',
      setup: (world) => {
        world.writeConfig({
          profiles: { a: { format: 'openai', baseUrl: CLOSED_URL, model: 'm' } },
        });
        return { task: 'x', profile: 'nope' };
      },
      expected: /Unknown profile "nope"\. Profiles: a\./,
    },
    {
      name: 'unreachable worker',
      setup: (world) => {
        world.writeConfig({
          profiles: { dead: { format: 'openai', baseUrl: CLOSED_URL, model: 'm' } },
        });
        return { task: 'x' };
      },
      expected:
        /Worker profile "dead" \(openai, model m at http:\/\/127\.0\.0\.1:2\/v1\) failed: Cannot reach http:\/\/127\.0\.0\.1:2\/v1\/chat\/completions \(ECONNREFUSED\)\. Is the server running and is baseUrl right\?/,
    },
    {
      name: 'file outside the project',
      setup: (world) => {
        writeFileSync(join(world.root, 'secret.txt'), 'top secret');
        return { task: 'x', files: ['../secret.txt'] };
      },
      expected: /files\[0\] "\.\.\/secret\.txt" resolves to .*secret\.txt, outside the project/,
    },
    {
      name: 'symlink leading outside the project',
      setup: (world) => {
        writeFileSync(join(world.root, 'secret.txt'), 'top secret');
        symlinkSync(join(world.root, 'secret.txt'), join(world.project, 'link.txt'));
        return { task: 'x', files: ['link.txt'] };
      },
      expected: /files\[0\] "link\.txt" resolves to .*secret\.txt, outside the project/,
    },
    {
      name: 'absolute path outside the project',
      setup: () => ({ task: 'x', files: ['/etc/hostname'] }),
      expected: /files\[0\] "\/etc\/hostname" resolves to \/etc\/hostname, outside the project/,
    },
    {
      name: 'missing file',
      setup: () => ({ task: 'x', files: ['logs/none.log'] }),
      expected: /files\[0\] "logs\/none\.log" does not exist/,
    },
    {
      name: 'glob matching nothing',
      setup: () => ({ task: 'x', files: ['**/*.nothing'] }),
      expected: /files\[0\] "\*\*\/\*\.nothing" matched no file under/,
    },
    {
      name: 'over the size cap',
      setup: (world) => {
        world.writeConfig({
          profiles: {
            small: { format: 'openai', baseUrl: CLOSED_URL, model: 'm', maxInputKb: 100 },
          },
        });
        world.writeProjectFile('big.log', makeLog(150 * 1024));
        return { task: 'x', files: ['big.log'] };
      },
      expected:
        /The files total 150\.0 KB, over the 100\.0 KB cap for one call \(largest: big\.log 150\.0 KB\)/,
    },
    {
      name: 'binary file',
      setup: (world) => {
        world.writeProjectFile('image.bin', Buffer.from([1, 2, 0, 3]));
        return { task: 'x', files: ['image.bin'] };
      },
      expected: /image\.bin looks binary/,
    },
    {
      name: 'write_to outside the project',
      setup: () => ({ task: 'x', write_to: '../out.md' }),
      expected: /write_to "\.\.\/out\.md" is outside the project/,
    },
    {
      name: 'missing key variable',
      setup: (world) => {
        world.writeConfig({
          profiles: {
            cloud: { format: 'openai', baseUrl: CLOSED_URL, model: 'm', apiKeyEnv: 'NOPE_KEY' },
          },
        });
        return { task: 'x' };
      },
      expected: /Profile "cloud" takes its key from \$NOPE_KEY, which is not set/,
    },
    {
      name: 'invalid config',
      setup: (world) => {
        world.writeConfig({
          profiles: { bad: { format: 'grpc', baseUrl: 'nope', model: 'm', colour: 1 } },
        });
        return { task: 'x' };
      },
      expected:
        /^Invalid config in .*config\.json:\n(- profiles\.bad(\.format: must be one of "openai", "anthropic"[^\n]*|\.baseUrl: must be an http\(s\) URL such as "http:\/\/127\.0\.0\.1:11434\/v1"|: unknown field "colour" \(check the spelling; this version does not support it\))\n){3}Fix these fields/,
    },
    {
      name: 'bad arguments',
      setup: () => ({ files: 'not-an-array' }),
      expected:
        /Invalid arguments for tool delegate: .*expected string, received undefined at task[\s\S]*expected array, received string at files/,
    },
  ];

  for (const testCase of cases) {
    it(testCase.name, async ({ world, server: servers }) => {
      world.writeConfig({
        profiles: { dead: { format: 'openai', baseUrl: CLOSED_URL, model: 'm' } },
      });
      const args = testCase.setup(world);
      const server = await servers.start(world.env);
      const { text, isError } = await server.callText('delegate', args);
      expect(isError).toBe(true);
      expect(text).toMatch(testCase.expected);
    });
  }

  it('returns the endpoint own words for an HTTP error', async ({
    world,
    provider,
    server: servers,
  }) => {
    const fake = await provider.start({
      respond: () => ({
        kind: 'error',
        status: 401,
        body: { error: { message: 'Incorrect API key provided' } },
      }),
    });
    world.writeConfig({
      profiles: { cloud: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm' } },
    });
    const server = await servers.start(world.env);
    const { text, isError } = await server.callText('delegate', { task: 'x' });
    expect(isError).toBe(true);
    expect(text).toContain('answered HTTP 401: Incorrect API key provided');
  });

  it('reports a model that only reasoned and ran out of tokens, not success', async ({
    world,
    provider,
    server: servers,
  }) => {
    const fake = await provider.start({
      respond: () => ({ thinking: 'thinking...', text: '', stopReason: 'length' }),
    });
    world.writeConfig({
      profiles: { r: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm' } },
    });
    const server = await servers.start(world.env);
    const { text, isError } = await server.callText('delegate', { task: 'x' });
    expect(isError).toBe(true);
    expect(text).toContain(
      'returned no answer text (it was still reasoning): [cut off at 1 output token — raise max_output_tokens or narrow the task]',
    );
  });
});

describe('a silent endpoint', () => {
  it('is reported once its profile idle limit passes, with the endpoint and the knob named, and not retried', async ({
    world,
    provider,
    server: servers,
  }) => {
    const fake = await provider.start({ respond: () => ({ kind: 'hang' }) });
    world.writeConfig({
      profiles: {
        slow: {
          format: 'openai',
          baseUrl: fake.openaiBaseUrl,
          model: 'm',
          local: true,
          idleTimeoutS: 3,
        },
      },
    });
    const server = await servers.start(world.env);
    const started = Date.now();
    const { text, isError } = await server.callText('delegate', { task: 'Say hi' });
    const elapsedMs = Date.now() - started;
    expect(isError).toBe(true);
    expect(text).toContain(`${fake.openaiBaseUrl}/chat/completions sent nothing for 3 s`);
    expect(text).toContain('"idleTimeoutS"');
    // One wait of the limit, not four: a stall is not retried on the same endpoint.
    expect(fake.requests).toHaveLength(1);
    expect(elapsedMs).toBeLessThan(scaledMs(20_000));
  });
});
