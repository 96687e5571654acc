import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { taskTest } from '../helpers/task-world.ts';
import { CLOSED_URL, type TempEnv } from '../helpers/temp-env.ts';

/** A provider that names the model it was asked for. */
const it = taskTest.extend('fake', ({ provider }) =>
  provider.start({ respond: (request) => ({ text: `answered ${request.body?.model}` }) }),
);
it.override('repository', null);

const configText = (world: TempEnv) => readFileSync(join(world.dataHome, 'config.json'), 'utf8');
const config = (world: TempEnv) => JSON.parse(configText(world)) as Record<string, any>;

describe('provider_set', () => {
  it('adds a profile that the next call uses, with no restart, keeping every other setting', async ({
    world,
    fake,
    server: servers,
  }) => {
    world.writeConfig({
      defaultProfile: 'old',
      profiles: {
        old: { format: 'openai', baseUrl: CLOSED_URL, model: 'old-model', use: 'keep me' },
      },
      budget: { dailyUsd: 5 },
      largeRead: { thresholdKb: 80 },
    });
    const server = await servers.start(world.env);
    const saved = await server.callText('provider_set', {
      name: 'fresh',
      format: 'openai',
      base_url: fake.openaiBaseUrl,
      model: 'fresh-model',
      use: 'summaries',
      local: true,
      headers: { 'x-litellm-tags': 'team-a' },
      price: { input_per_mtok: 0.1, output_per_mtok: 0.2 },
      max_output_tokens: 2048,
      default: true,
    });
    expect(saved.isError).toBe(false);
    expect(saved.text).toContain(
      `Added profile "fresh" in ${join(world.dataHome, 'config.json')}: openai · model fresh-model`,
    );
    expect(saved.text).toContain('It is the default profile.');
    expect(config(world)).toEqual({
      defaultProfile: 'fresh',
      profiles: {
        old: { format: 'openai', baseUrl: CLOSED_URL, model: 'old-model', use: 'keep me' },
        fresh: {
          format: 'openai',
          baseUrl: fake.openaiBaseUrl,
          model: 'fresh-model',
          use: 'summaries',
          local: true,
          headers: { 'x-litellm-tags': 'team-a' },
          price: { inputPerMTok: 0.1, outputPerMTok: 0.2 },
          maxOutputTokens: 2048,
        },
      },
      budget: { dailyUsd: 5 },
      largeRead: { thresholdKb: 80 },
    });
    const answer = await server.callText('delegate', { task: 'hi' });
    expect(answer.text).toContain('answered fresh-model');
    expect(fake.requests[0]?.headers['x-litellm-tags']).toBe('team-a');
  });

  it('adds a CLI engine profile, which needs no base_url (the CLI keeps its own login)', async ({
    world,
    server: servers,
  }) => {
    world.writeConfig({ profiles: {} });
    const server = await servers.start(world.env);
    const saved = await server.callText('provider_set', {
      name: 'cc',
      format: 'claude-cli',
      model: 'sonnet',
      use: 'long refactors',
    });
    expect(saved.isError, saved.text).toBe(false);
    expect(saved.text).toContain(
      `Added profile "cc" in ${join(world.dataHome, 'config.json')}: claude-cli · model sonnet · the CLI's own login and endpoint.`,
    );
    expect(config(world)).toEqual({
      profiles: { cc: { format: 'claude-cli', model: 'sonnet', use: 'long refactors' } },
    });
    const providers = await server.callText('providers', {});
    expect(providers.text).toContain('cc');
    expect(providers.text).toContain('claude-cli');
  });

  it('updates only the fields given', async ({ world, fake, server: servers }) => {
    world.writeConfig({
      profiles: { w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm', pool: 3 } },
    });
    const server = await servers.start(world.env);
    const { text } = await server.callText('provider_set', { name: 'w', use: 'code review' });
    expect(text).toMatch(/^Updated profile "w"/);
    expect(config(world).profiles.w).toEqual({
      format: 'openai',
      baseUrl: fake.openaiBaseUrl,
      model: 'm',
      pool: 3,
      use: 'code review',
    });
  });

  const INVALID: Array<[string, Record<string, unknown>, RegExp]> = [
    [
      'base_url',
      { format: 'openai', base_url: 'localhost:11434', model: 'm' },
      /- base_url: must be an http\(s\) URL/,
    ],
    ['model', { format: 'openai', base_url: CLOSED_URL }, /- model: is required for a new profile/],
    [
      'format',
      { format: 'grpc', base_url: CLOSED_URL, model: 'm' },
      /Invalid arguments for tool provider_set: Invalid option: expected one of "openai"\|"anthropic"\|"copilot"\|"claude-cli"\|"codex-cli"\|"gemini-cli" at format/,
    ],
    [
      'pool',
      { format: 'openai', base_url: CLOSED_URL, model: 'm', pool: 1.5 },
      /- pool: must be the number of calls this worker may run at once/,
    ],
    [
      'price',
      {
        format: 'openai',
        base_url: CLOSED_URL,
        model: 'm',
        price: { input_per_mtok: -1, output_per_mtok: 1 },
      },
      /- price\.input_per_mtok: /,
    ],
    [
      'local',
      { format: 'openai', base_url: CLOSED_URL, model: 'm', local: 'yes', headers: 'x' },
      /- local: must be true or false\n- headers: must map header names to strings/,
    ],
    [
      'reasoning',
      { format: 'openai', base_url: CLOSED_URL, model: 'm', reasoning: 'sometimes' },
      /- reasoning: must be "auto", "always" or "never"/,
    ],
    [
      'api_key_env',
      {
        format: 'openai',
        base_url: CLOSED_URL,
        model: 'm',
        api_key_env: 'sk-live-abcdefghijklmnop',
      },
      /^api_key_env: the value looks like a key; nothing was saved/,
    ],
    [
      'failover',
      { format: 'openai', base_url: CLOSED_URL, model: 'm', local: true, failover: ['other'] },
      /^Nothing was saved: Invalid config in .*profiles\.x\.failover: a local profile never fails over/,
    ],
    [
      'name',
      { format: 'openai', base_url: CLOSED_URL, model: 'm', name: 'env' },
      /^name: "env" is the environment-only profile/,
    ],
    [
      'name',
      { format: 'openai', base_url: CLOSED_URL, model: 'm', name: 'no spaces' },
      /^name: "no spaces" is not a valid profile name/,
    ],
    [
      'base_url',
      { format: 'openai', base_url: 'http://169.254.169.254/v1', model: 'm' },
      /^base_url: Refused to connect to 169\.254\.169\.254/,
    ],
  ];
  for (const [field, fields, message] of INVALID) {
    it(`a bad ${field} is named, and nothing is written`, async ({ world, server: servers }) => {
      world.writeConfig({
        profiles: { other: { format: 'openai', baseUrl: CLOSED_URL, model: 'o' } },
      });
      const before = configText(world);
      const server = await servers.start(world.env);
      const { text, isError } = await server.callText('provider_set', { name: 'x', ...fields });
      expect(isError).toBe(true);
      expect(text).toMatch(message);
      expect(configText(world)).toBe(before);
    });
  }

  const KEYISH: Array<[string, Record<string, unknown>, RegExp]> = [
    [
      'a key argument',
      { api_key: 'sk-abcdefghijklmnop0123' },
      /^provider_set has no field "api_key"\. Keys are never tool arguments: call provider_key/,
    ],
    [
      'an Authorization header',
      { headers: { Authorization: 'Bearer abc' } },
      /^headers: "Authorization" carries a credential/,
    ],
    [
      'a Bifrost virtual key header',
      { headers: { 'x-bf-vk': 'vk-1' } },
      /^headers: "x-bf-vk" carries a credential/,
    ],
    [
      'a key-shaped header value',
      { headers: { 'x-team': 'sk-ant-api03-abcdefghijklmnopqrstuv' } },
      /^headers: the value of "x-team" looks like a key/,
    ],
    [
      'an opaque token header value',
      { headers: { 'x-team': 'a8f5f167f44f4964e6c998dee827110c9f' } },
      /looks like a key/,
    ],
    [
      'a key in use',
      { use: 'my key is ghp_abcdefghijklmnopqrstuvwx' },
      /^use: the value looks like a key/,
    ],
    [
      'a password in the URL',
      { base_url: 'https://me:hunter2@gw.example.test/v1' },
      /^base_url: a URL must not carry a user name or password/,
    ],
    [
      'a key in the query',
      { base_url: 'https://gw.example.test/v1?api_key=abc' },
      /^base_url: the query parameter "api_key" looks like a credential/,
    ],
  ];
  for (const [what, fields, message] of KEYISH) {
    it(`refuses ${what}, without repeating it`, async ({ world, server: servers }) => {
      const server = await servers.start(world.env);
      const { text, isError } = await server.callText('provider_set', {
        name: 'x',
        format: 'openai',
        base_url: CLOSED_URL,
        model: 'm',
        ...fields,
      });
      expect(isError).toBe(true);
      expect(text).toMatch(message);
      for (const secret of [
        'sk-abcdefghijklmnop0123',
        'sk-ant-api03',
        'ghp_',
        'hunter2',
        'a8f5f167',
      ]) {
        expect(text).not.toContain(secret);
      }
    });
  }
});

describe('provider_remove', () => {
  it('removes the profile and its default, and names what remains', async ({
    world,
    server: servers,
  }) => {
    world.writeConfig({
      defaultProfile: 'a',
      profiles: {
        a: { format: 'openai', baseUrl: CLOSED_URL, model: 'm' },
        b: { format: 'openai', baseUrl: CLOSED_URL, model: 'n' },
      },
    });
    const server = await servers.start(world.env);
    const { text, isError } = await server.callText('provider_remove', { name: 'a' });
    expect(isError).toBe(false);
    expect(text).toBe(
      `Removed profile "a" from ${join(world.dataHome, 'config.json')}. It was the default; no default is set now (provider_set with default: true sets one). Profiles now: b.`,
    );
    expect(config(world)).toEqual({
      profiles: { b: { format: 'openai', baseUrl: CLOSED_URL, model: 'n' } },
    });
  });

  it('refuses to break a failover chain, and says where a project profile comes from', async ({
    world,
    server: servers,
  }) => {
    world.writeConfig({
      profiles: {
        a: { format: 'openai', baseUrl: CLOSED_URL, model: 'm', failover: ['b'] },
        b: { format: 'openai', baseUrl: CLOSED_URL, model: 'n' },
      },
    });
    world.writeProjectFile(
      '.claude/delegate.json',
      JSON.stringify({ profiles: { p: { format: 'openai', baseUrl: CLOSED_URL, model: 'p' } } }),
    );
    const server = await servers.start(world.env);
    const chained = await server.callText('provider_remove', { name: 'b' });
    expect(chained.isError).toBe(true);
    expect(chained.text).toMatch(
      /^Nothing was saved: .*profiles\.a\.failover: "b" is not another profile/,
    );
    const project = await server.callText('provider_remove', { name: 'p' });
    expect(project.text).toMatch(
      /^No profile "p" in .*config\.json \(it has: a, b\)\. It comes from .*\.claude\/delegate\.json: edit that file\./,
    );
  });
});

describe('the environment profile beside stored profiles, and where settings come from', () => {
  it('says when a configured profile named env hides the environment profile', async ({
    world,
    fake,
    server: servers,
  }) => {
    world.writeConfig({
      profiles: { env: { format: 'openai', baseUrl: CLOSED_URL, model: 'mine' } },
    });
    const server = await servers.start({
      ...world.env,
      DELEGATE_BASE_URL: fake.openaiBaseUrl,
      DELEGATE_MODEL: 'x',
    });
    const { text } = await server.callText('providers', {});
    expect(text).toMatch(
      /^DELEGATE_BASE_URL\/DELEGATE_MODEL are set, but the profile "env" in .*config\.json takes that name and wins/,
    );
    expect(text).toContain('- env (default): openai · model mine');
  });

  it('providers names the source of every profile, its key and the default', async ({
    world,
    fake,
    server: servers,
  }) => {
    world.writeConfig({
      profiles: {
        fast: {
          format: 'openai',
          baseUrl: 'https://api.example.test/v1',
          model: 'm1',
          apiKeyEnv: 'FAST_KEY',
          headers: { 'x-litellm-tags': 'ci' },
        },
        code: { format: 'anthropic', baseUrl: CLOSED_URL, model: 'm2' },
      },
    });
    world.writeProjectFile(
      '.claude/delegate.json',
      JSON.stringify({
        profiles: { code: { format: 'openai', baseUrl: CLOSED_URL, model: 'p', local: true } },
      }),
    );
    const server = await servers.start({
      ...world.env,
      FAST_KEY: 'sk-env-canary-000000000000',
      DELEGATE_BASE_URL: fake.openaiBaseUrl,
      DELEGATE_MODEL: 'env-model',
    });
    const { text } = await server.callText('providers', {});
    const userFile = join(world.dataHome, 'config.json');
    const projectFile = join(world.project, '.claude', 'delegate.json');
    expect(text).toContain('(default: env; ');
    expect(text).toContain('; the environment profile):');
    expect(text).toContain(`key from $FAST_KEY (set) · from user config ${userFile}`);
    expect(text).toContain('  headers: x-litellm-tags');
    // The project may tune the user's profile but not re-aim it (issue 14): format and local stay.
    expect(text).toContain(
      `- code: anthropic · model p · ${CLOSED_URL} · remote · no key configured · from project config ${projectFile} (replaces the one in ${userFile})`,
    );
    expect(text).toContain(
      `WARNING: ${projectFile} redefines profile "code" of ${userFile} with another format, local.`,
    );
    expect(text).toContain(
      `- env (default): openai · model env-model · ${fake.openaiBaseUrl} · local · no key needed · from environment (DELEGATE_BASE_URL, DELEGATE_MODEL)`,
    );
    expect(text).not.toContain('sk-env-canary');
    expect((await server.callText('delegate', { task: 'hi' })).text).toContain(
      'answered env-model',
    );
    await server.callText('provider_set', { name: 'fast', default: true });
    const after = await server.callText('providers', {});
    expect(after.text).toContain(`(default: fast; `);
    expect(after.text).toContain(`; defaultProfile set in ${userFile}):`);
    expect(after.text).toContain('- env: openai · model env-model');
    expect((await server.callText('delegate', { task: 'hi', profile: 'env' })).text).toContain(
      'answered env-model',
    );
  });
});
