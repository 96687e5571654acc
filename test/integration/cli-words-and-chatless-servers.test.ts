// What a terminal user reads from `delegate doctor` and `delegate run`: no MCP tool named as if
// the CLI had it; and a local server that lists no model that can chat, named with its models
// and the way to get one, in doctor, in the providers tool and in the error a call gets.
import { execFile } from 'node:child_process';
import { describe, expect } from 'vitest';
import { CLI_BUNDLE } from '../helpers/cli-process.ts';
import { taskTest as it } from '../helpers/task-world.ts';
import { CLOSED_URL, type TempEnv } from '../helpers/temp-env.ts';
import { BARE_TOOL } from '../helpers/tool-names.ts';

const NO_BWRAP = { DELEGATE_BWRAP_PATH_FOR_TEST: '/nonexistent/bwrap' };

it.override('repository', null);

function cli(
  world: TempEnv,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI_BUNDLE, ...args],
      { env: { ...world.env, ...NO_BWRAP, ...env }, cwd: world.project, encoding: 'utf8' },
      (error, stdout, stderr) => {
        const code = error ? (error as { code?: number }).code : 0;
        resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr });
      },
    );
  });
}

describe('a local server with no model that can chat', () => {
  it.for<[string, string, string[], string]>([
    [
      'Ollama, embedding models only',
      'Ollama',
      ['nomic-embed-text:latest', 'mxbai-embed-large:latest'],
      'lists only models that cannot chat (nomic-embed-text:latest, mxbai-embed-large:latest); pull one: `ollama pull qwen3-coder:30b`',
    ],
    ['Ollama, nothing pulled yet', 'Ollama', [], 'lists no models; pull one: `ollama pull'],
    [
      'LM Studio, an embedding model only',
      'LM Studio',
      ['text-embedding-nomic-embed-text-v1.5'],
      'lists only models that cannot chat (text-embedding-nomic-embed-text-v1.5); download a chat model in LM Studio',
    ],
  ])(
    '%s: doctor, providers, delegate run and a delegate call say which server, which models, what to do',
    async ([, kind, models, says], { world, provider, server: servers }) => {
      const fake = await provider.start({
        models,
        capabilities: Object.fromEntries(models.map((model) => [model, ['embedding']])),
      });
      const discovery = { DELEGATE_DISCOVERY_URLS_FOR_TEST: `${kind}=${fake.openaiBaseUrl}` };
      const named = `${kind} at ${fake.openaiBaseUrl} ${says}`;
      const pin = `"baseUrl":"${fake.openaiBaseUrl}","model":"<chat model>"`;

      const doctor = await cli(world, ['doctor'], discovery);
      expect(doctor.code).toBe(1);
      expect(doctor.stdout).toMatch(
        /^FAIL profiles: No worker to use: a local model server answered/m,
      );
      expect(doctor.stdout).toContain(named);
      expect(doctor.stdout).toContain(pin);

      const run = await cli(world, ['run', 'hello'], discovery);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(named);
      expect(run.stderr).not.toContain('internal error');

      const server = await servers.start({ ...world.env, ...discovery });
      for (const [tool, args] of [
        ['providers', {}],
        ['delegate', { task: 'hello' }],
      ] as const) {
        const result = await server.callText(tool, args);
        expect(result.isError, result.text).toBe(true);
        expect(result.text).toContain(named);
      }
      // Nothing asked any model to chat.
      expect(fake.requests).toEqual([]);
    },
  );
});

describe('delegate doctor and delegate run name CLI commands, not MCP tools', () => {
  it.for<[string, object, string[], string]>([
    [
      'a key variable not set',
      {
        profiles: {
          keyed: { format: 'openai', baseUrl: CLOSED_URL, model: 'm', apiKeyEnv: 'WORDS_TEST_KEY' },
        },
      },
      ['doctor'],
      'store a key with `delegate provider-key <profile>`',
    ],
    [
      'an unknown profile',
      { profiles: { a: { format: 'openai', baseUrl: CLOSED_URL, model: 'm', local: true } } },
      ['run', '--profile', 'nope', 'hello'],
      'Run delegate doctor to see them',
    ],
  ])('%s', async ([, config, args, says], { world }) => {
    world.writeConfig(config);
    const result = await cli(world, args);
    const output = result.stdout + result.stderr;
    expect(output).toContain(says);
    expect(output).not.toMatch(BARE_TOOL);
  });

  it('a project file re-aiming a profile: the warning names config.json', async ({ world }) => {
    world.writeConfig({
      profiles: { fast: { format: 'openai', baseUrl: CLOSED_URL, model: 'm', local: true } },
    });
    world.writeProjectFile(
      '.claude/delegate.json',
      JSON.stringify({
        profiles: { fast: { format: 'openai', baseUrl: 'http://127.0.0.1:3/v1', model: 'm' } },
      }),
    );
    const result = await cli(world, ['doctor']);
    expect(result.stdout).toContain('add it to your config under another name (in config.json)');
    expect(result.stdout).not.toMatch(BARE_TOOL);
  });

  it('a discovered server: how to pin another model names config.json', async ({
    world,
    provider,
  }) => {
    const fake = await provider.start({ models: ['nomic-embed-text', 'qwen3'] });
    const result = await cli(world, ['doctor'], {
      DELEGATE_DISCOVERY_URLS_FOR_TEST: `LM Studio=${fake.openaiBaseUrl}`,
    });
    expect(result.stdout).toContain('Chosen: qwen3. Skipped (cannot chat): nomic-embed-text.');
    expect(result.stdout).toMatch(/To use another, add a profile in \S+config\.json/);
    expect(result.stdout).not.toMatch(BARE_TOOL);
  });
});
