import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { taskTest } from '../helpers/task-world.ts';
import type { TempEnv } from '../helpers/temp-env.ts';

/**
 * Names every JavaScript object answers to ("constructor", "toString", "__proto__") are
 * ordinary profile names: unknown until defined, and then a profile like any other.
 */
const it = taskTest.extend('served', async ({ world, provider, server }) => {
  const fake = await provider.start({
    respond: () => ({ text: 'The worker answer.', model: 'm' }),
  });
  world.writeConfig({
    defaultProfile: 'local',
    profiles: {
      local: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm', local: true },
    },
  });
  return { fake, server: await server.start(world.env) };
});
it.override('repository', null);

const configText = (world: TempEnv) => readFileSync(join(world.dataHome, 'config.json'), 'utf8');

describe('profile names', () => {
  it.for(['constructor', 'toString', 'hasOwnProperty', 'valueOf'])(
    '"%s" is an ordinary name: unknown, then saved, used without a key and removed',
    async (name, { world, served }) => {
      const unknown = await served.server.callText('delegate', { task: 'Hi', profile: name });
      expect(unknown).toEqual({
        isError: true,
        text: `Unknown profile "${name}". Profiles: local. Call providers to see them, or omit profile to use the default.`,
      });
      const notThere = await served.server.callText('provider_remove', { name });
      expect(notThere.isError).toBe(true);
      expect(notThere.text).toMatch(new RegExp(`^No profile "${name}" in `));
      const saved = await served.server.callText('provider_set', {
        name,
        format: 'openai',
        base_url: served.fake.openaiBaseUrl,
        model: 'm',
        local: true,
      });
      expect(saved.text).toMatch(new RegExp(`^Added profile "${name}" in `));
      expect(saved.text).toContain('Key: no key needed.');
      const used = await served.server.callText('delegate', { task: 'Hi', profile: name });
      expect(used.isError).toBe(false);
      expect(used.text).toContain(`[delegate: profile ${name} · model m`);
      const removed = await served.server.callText('provider_remove', { name });
      expect(removed).toEqual({
        isError: false,
        text: `Removed profile "${name}" from ${join(world.dataHome, 'config.json')}. Profiles now: local.`,
      });
    },
  );

  it('"__proto__" is unknown everywhere and cannot be created', async ({ world, served }) => {
    const before = configText(world);
    for (const [tool, args] of [
      ['delegate', { task: 'Hi', profile: '__proto__' }],
      ['provider_key', { profile: '__proto__' }],
      ['provider_remove', { name: '__proto__' }],
      [
        'provider_set',
        { name: '__proto__', format: 'openai', base_url: served.fake.url, model: 'm' },
      ],
    ] as const) {
      const { text, isError } = await served.server.callText(tool, args);
      expect(isError, text).toBe(true);
      expect(text).toMatch(
        /^(Unknown profile "__proto__"|No profile "__proto__"|name: "__proto__" is reserved)/,
      );
      expect(text).not.toMatch(/Removed|internal error/);
    }
    expect(configText(world)).toBe(before);
  });

  it.for<[string, Record<string, unknown>, string]>([
    [
      'provider_set',
      { name: 'qwen2.5', format: 'openai', base_url: 'http://127.0.0.1:2/v1', model: 'm' },
      'name',
    ],
    ['provider_remove', { name: 'a/b' }, 'name'],
    ['provider_key', { profile: 'a b' }, 'profile'],
    ['delegate', { task: 'Hi', profile: 'x'.repeat(65) }, 'profile'],
    ['task_start', { task: 'Hi', profile: 'dots.not.allowed' }, 'profile'],
  ])(
    '%s refuses a name outside the rule, naming the rule',
    async ([tool, args, argument], { served }) => {
      const { text, isError } = await served.server.callText(tool, args);
      expect(isError).toBe(true);
      expect(text).toMatch(
        new RegExp(
          `^${argument}: ".*" is not a valid profile name \\(letters, digits, "-" and "_" only, 1 to 64 characters\\)\\. Call providers to see the profiles\\.$`,
        ),
      );
    },
  );

  it('a config file with a name outside the rule is refused, naming the file and the rule', async ({
    world,
    served,
  }) => {
    const file = join(world.dataHome, 'config.json');
    writeFileSync(
      file,
      JSON.stringify({
        profiles: {
          'qwen2.5': { format: 'openai', baseUrl: served.fake.openaiBaseUrl, model: 'm' },
        },
      }),
    );
    const { text, isError } = await served.server.callText('providers', {});
    expect(isError).toBe(true);
    expect(text).toContain(file);
    expect(text).toContain(
      'profile names use letters, digits, "-" and "_" only, 1 to 64 characters',
    );
  });
});
