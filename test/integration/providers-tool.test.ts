import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { acquireSlot } from '../../server/src/calls/pool.ts';
import { taskTest as it } from '../helpers/task-world.ts';
import { CLOSED_URL } from '../helpers/temp-env.ts';

it.override('repository', null);

describe('providers', () => {
  it('lists profiles from the config and the project file, the default and how each authenticates', async ({
    world,
    server: servers,
  }) => {
    world.writeConfig({
      defaultProfile: 'fast',
      profiles: {
        fast: {
          format: 'openai',
          baseUrl: 'https://api.example.test/v1',
          model: 'm1',
          apiKeyEnv: 'FAST_KEY',
          use: 'summaries',
        },
        code: { format: 'anthropic', baseUrl: 'http://127.0.0.1:4000', model: 'm2', use: 'code' },
      },
    });
    mkdirSync(join(world.project, '.claude'));
    writeFileSync(
      join(world.project, '.claude', 'delegate.json'),
      JSON.stringify({
        profiles: {
          code: { format: 'openai', baseUrl: CLOSED_URL, model: 'project-model', local: true },
        },
      }),
    );
    const server = await servers.start({ ...world.env, FAST_KEY: 'sk-secret-value' });
    const { text, isError } = await server.callText('providers', {});
    expect(isError).toBe(false);
    expect(text).toContain('Profiles (default: fast;');
    expect(text).toContain(
      '- fast (default): openai · model m1 · https://api.example.test/v1 · remote · key from $FAST_KEY (set)',
    );
    expect(text).toContain('  use: summaries');
    // The project file tunes the user's "code" but cannot re-aim it (issue 14), and says so.
    expect(text).toMatch(
      /- code: anthropic · model project-model · http:\/\/127\.0\.0\.1:4000 · remote · no key configured · from .*\.claude\/delegate\.json/,
    );
    expect(text).toMatch(
      /^WARNING: .*redefines profile "code" .* with another format, baseUrl, local\./m,
    );
    expect(text).not.toContain('sk-secret-value');
  });

  it('shows pool occupancy: who holds which slot', async ({ world, server: servers }) => {
    world.writeConfig({
      profiles: {
        w: { format: 'openai', baseUrl: CLOSED_URL, model: 'm', pool: 3, failover: ['x'] },
        x: { format: 'openai', baseUrl: CLOSED_URL, model: 'n' },
      },
    });
    const slot = await acquireSlot(join(world.dataHome, 'slots'), '127.0.0.1:2 m', 3, {
      label: 'w t_test1',
    });
    try {
      const server = await servers.start(world.env);
      const { text } = await server.callText('providers', {});
      expect(text).toContain(
        `  pool: "127.0.0.1:2 m" 1/3 busy: pid ${process.pid} (w t_test1) since `,
      );
      expect(text).toContain('  failover: x');
    } finally {
      await slot?.release();
    }
  });

  it('says when a key variable is missing', async ({ world, server: servers }) => {
    world.writeConfig({
      profiles: {
        fast: { format: 'openai', baseUrl: CLOSED_URL, model: 'm', apiKeyEnv: 'MISSING_KEY' },
      },
    });
    const server = await servers.start(world.env);
    const { text } = await server.callText('providers', {});
    expect(text).toContain(
      'key from $MISSING_KEY (NOT SET: export it before starting Claude Code)',
    );
  });

  it('with check, reports reachability and the models each endpoint serves', async ({
    world,
    provider,
    server: servers,
  }) => {
    const fake = await provider.start({ models: ['qwen-a', 'qwen-b'] });
    world.writeConfig({
      profiles: {
        up: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'qwen-b', local: true },
        wrong: { format: 'anthropic', baseUrl: fake.url, model: 'claude-x' },
        down: { format: 'openai', baseUrl: CLOSED_URL, model: 'm' },
      },
    });
    const server = await servers.start(world.env);
    const { text } = await server.callText('providers', { check: true });
    expect(text).toMatch(
      /- up: [^\n]*\n(?: {2}[^\n]*\n)* {2}check: reachable in \d+ ms; serves qwen-b; models: qwen-a, qwen-b/,
    );
    expect(text).toMatch(
      /- wrong: [^\n]*\n(?: {2}[^\n]*\n)* {2}check: reachable in \d+ ms; does NOT list claude-x/,
    );
    expect(text).toMatch(
      /- down: [^\n]*\n(?: {2}[^\n]*\n)* {2}check: FAILED: Cannot reach http:\/\/127\.0\.0\.1:2\/v1\/models \(ECONNREFUSED\)/,
    );
    expect(text).toContain('Profiles (default: none — pass profile or set defaultProfile;');
  });

  it('with no configuration, shows the auto-detected local server', async ({
    world,
    provider,
    server: servers,
  }) => {
    const fake = await provider.start({ models: ['llama3.2:3b'] });
    const server = await servers.start({
      ...world.env,
      DELEGATE_DISCOVERY_URLS_FOR_TEST: `Ollama=${fake.openaiBaseUrl}`,
    });
    const { text } = await server.callText('providers', {});
    expect(text).toContain('No profiles configured; using the auto-detected local server:');
    expect(text).toContain('- local (default): openai · model llama3.2:3b');
    expect(text).toContain('Served models: llama3.2:3b.');
  });

  it('with nothing configured or running, says how to start a server or add a profile', async ({
    world,
    server: servers,
  }) => {
    const server = await servers.start(world.env);
    const { text, isError } = await server.callText('providers', {});
    expect(isError).toBe(false);
    expect(text).toMatch(/^No worker is configured and no local model server answered/);
    expect(text).toContain(join(world.dataHome, 'config.json'));
  });

  it('reports an invalid project file by name', async ({ world, server: servers }) => {
    mkdirSync(join(world.project, '.claude'));
    writeFileSync(join(world.project, '.claude', 'delegate.json'), '{ "profiles": { ');
    const server = await servers.start(world.env);
    const { text, isError } = await server.callText('providers', {});
    expect(isError).toBe(true);
    expect(text).toMatch(
      /^Invalid config in .*\.claude\/delegate\.json:1:17: not valid JSON \(.*\)\. Fix the syntax/,
    );
  });
});
