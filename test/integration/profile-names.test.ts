import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeProvider } from '../helpers/fake-provider.ts';
import { startServer, type ServerHandle } from '../helpers/mcp-server.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';

/**
 * Names every JavaScript object answers to ("constructor", "toString", "__proto__") are
 * ordinary profile names: unknown until defined, and then a profile like any other.
 */
let world: TempEnv;
let fake: FakeProvider;
let server: ServerHandle;

beforeEach(async () => {
  world = createTempEnv();
  fake = await startFakeProvider({ respond: () => ({ text: 'The worker answer.', model: 'm' }) });
  world.writeConfig({
    defaultProfile: 'local',
    profiles: {
      local: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm', local: true },
    },
  });
  server = await startServer(world.env);
});
afterEach(async () => {
  await server.close();
  await fake.close();
  world.cleanup();
});

const configText = () => readFileSync(join(world.dataHome, 'config.json'), 'utf8');

describe('profile names', () => {
  it.each(['constructor', 'toString', 'hasOwnProperty', 'valueOf'])(
    '"%s" is an ordinary name: unknown, then saved, used without a key and removed',
    async (name) => {
      const unknown = await server.callText('delegate', { task: 'Hi', profile: name });
      expect(unknown).toEqual({
        isError: true,
        text: `Unknown profile "${name}". Profiles: local. Call providers to see them, or omit profile to use the default.`,
      });
      const notThere = await server.callText('provider_remove', { name });
      expect(notThere.isError).toBe(true);
      expect(notThere.text).toMatch(new RegExp(`^No profile "${name}" in `));
      const saved = await server.callText('provider_set', {
        name,
        format: 'openai',
        base_url: fake.openaiBaseUrl,
        model: 'm',
        local: true,
      });
      expect(saved.text).toMatch(new RegExp(`^Added profile "${name}" in `));
      expect(saved.text).toContain('Key: no key needed.');
      const used = await server.callText('delegate', { task: 'Hi', profile: name });
      expect(used.isError).toBe(false);
      expect(used.text).toContain(`[delegate: profile ${name} · model m`);
      const removed = await server.callText('provider_remove', { name });
      expect(removed).toEqual({
        isError: false,
        text: `Removed profile "${name}" from ${join(world.dataHome, 'config.json')}. Profiles now: local.`,
      });
    },
  );

  it('"__proto__" is unknown everywhere and cannot be created', async () => {
    const before = configText();
    for (const [tool, args] of [
      ['delegate', { task: 'Hi', profile: '__proto__' }],
      ['provider_key', { profile: '__proto__' }],
      ['provider_remove', { name: '__proto__' }],
      ['provider_set', { name: '__proto__', format: 'openai', base_url: fake.url, model: 'm' }],
    ] as const) {
      const { text, isError } = await server.callText(tool, args);
      expect(isError, text).toBe(true);
      expect(text).toMatch(
        /^(Unknown profile "__proto__"|No profile "__proto__"|name: "__proto__" is reserved)/,
      );
      expect(text).not.toMatch(/Removed|internal error/);
    }
    expect(configText()).toBe(before);
  });

  it.each([
    [
      'provider_set',
      { name: 'qwen2.5', format: 'openai', base_url: 'http://127.0.0.1:2/v1', model: 'm' },
      'name',
    ],
    ['provider_remove', { name: 'a/b' }, 'name'],
    ['provider_key', { profile: 'a b' }, 'profile'],
    ['delegate', { task: 'Hi', profile: 'x'.repeat(65) }, 'profile'],
    ['task_start', { task: 'Hi', profile: 'dots.not.allowed' }, 'profile'],
  ])('%s refuses a name outside the rule, naming the rule', async (tool, args, argument) => {
    const { text, isError } = await server.callText(tool, args);
    expect(isError).toBe(true);
    expect(text).toMatch(
      new RegExp(
        `^${argument}: ".*" is not a valid profile name \\(letters, digits, "-" and "_" only, 1 to 64 characters\\)\\. Call providers to see the profiles\\.$`,
      ),
    );
  });

  it('a config file with a name outside the rule is refused, naming the file and the rule', async () => {
    const file = join(world.dataHome, 'config.json');
    writeFileSync(
      file,
      JSON.stringify({
        profiles: { 'qwen2.5': { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm' } },
      }),
    );
    const { text, isError } = await server.callText('providers', {});
    expect(isError).toBe(true);
    expect(text).toContain(file);
    expect(text).toContain(
      'profile names use letters, digits, "-" and "_" only, 1 to 64 characters',
    );
  });
});
