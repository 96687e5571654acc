// A task worker reads the config without zod: what its server validated comes with the word to
// go, and only a file changed since makes it load the schemas. Each case takes fresh copies of
// the modules (a fresh process, as a worker is), none of which has loaded the schemas.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { heardTask } from '../../server/src/tasks/task-host.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';

let world: TempEnv;
beforeEach(() => {
  world = createTempEnv();
  vi.resetModules();
});
afterEach(() => world.cleanup());

/** read-config.ts and config-validation.ts as a new process has them: no schemas loaded. */
async function freshWorkerModules() {
  vi.resetModules();
  return {
    read: await import('../../server/src/profiles/read-config.ts'),
    validation: await import('../../server/src/profiles/config-validation.ts'),
  };
}

/** What a server process validated, as it sends it with the word to go. */
async function serverValidations(env: Record<string, string> = {}) {
  vi.resetModules();
  const { loadConfig } = await import('../../server/src/profiles/load-config.ts');
  loadConfig(world.dataHome, world.project, env);
  const { validationsSoFar } = await import('../../server/src/profiles/config-validation.ts');
  // Through JSON, as the pipe carries it.
  return JSON.parse(JSON.stringify(validationsSoFar())) as unknown;
}

const profile = (model: string) => ({
  format: 'openai',
  baseUrl: 'http://127.0.0.1:11434/v1',
  model,
});

function writeProjectConfig(config: unknown): void {
  mkdirSync(join(world.project, '.claude'), { recursive: true });
  writeFileSync(join(world.project, '.claude', 'delegate.json'), JSON.stringify(config));
}

describe('config validation in a task worker', () => {
  it('reads what its server validated without the schemas, both files and the environment profile', async () => {
    world.writeConfig({ profiles: { a: profile('user-a') }, budget: { dailyUsd: 5 } });
    writeProjectConfig({ profiles: { b: profile('project-b') }, budget: { dailyUsd: 2 } });
    const env = { DELEGATE_BASE_URL: 'http://127.0.0.1:9/v1', DELEGATE_MODEL: 'env-model' };
    const seed = await serverValidations(env);
    const { read, validation } = await freshWorkerModules();
    expect(() => read.readConfig(world.dataHome, world.project, env)).toThrow(
      validation.ConfigSchemasNotLoaded,
    );
    validation.rememberValidations(seed);
    const config = read.readConfig(world.dataHome, world.project, env);
    expect(read.everyProfile(config).map((each) => each.name)).toEqual(['a', 'env', 'b']);
    expect(config.profiles.get('env')?.model).toBe('env-model');
    expect(config.budget).toEqual({ dailyUsd: 2 });
  });

  it('loads the schemas for a file changed since, and still refuses an invalid one', async () => {
    world.writeConfig({ profiles: { a: profile('first') } });
    const seed = await serverValidations();
    const { read, validation } = await freshWorkerModules();
    validation.rememberValidations(seed);
    world.writeConfig({ profiles: { a: profile('second') } });
    expect(() => read.readConfig(world.dataHome, world.project, {})).toThrow(
      validation.ConfigSchemasNotLoaded,
    );
    const changed = await read.readConfigLazily(world.dataHome, world.project, {});
    expect(changed.profiles.get('a')?.model).toBe('second');
    world.writeConfig({ profiles: { a: { ...profile('third'), colour: 'blue' } } });
    await expect(read.readConfigLazily(world.dataHome, world.project, {})).rejects.toThrow(
      /Invalid config in .*config\.json:\n- profiles\.a: unknown field "colour"/,
    );
  });

  it('does not take a seed for another text of the file, nor one of the wrong shape', async () => {
    world.writeConfig({ profiles: { a: profile('seeded') } });
    const seed = (await serverValidations()) as Array<[string, { input: string; value: unknown }]>;
    const { read, validation } = await freshWorkerModules();
    // The same file name with another text: the worker validates what it reads, not the seed.
    validation.rememberValidations([
      [seed[0]![0], { input: '{"profiles":{}}', value: seed[0]![1].value }],
      'not an entry',
      [7, { input: 'x', value: 1 }],
      ['config /elsewhere.json', { input: 3, value: {} }],
    ]);
    validation.rememberValidations({ not: 'a list' });
    expect(() => read.readConfig(world.dataHome, world.project, {})).toThrow(
      validation.ConfigSchemasNotLoaded,
    );
    expect(validation.validationsSoFar()).toHaveLength(1);
  });

  it('a host hears a task with what came with it; anything else is no task', () => {
    expect(
      heardTask('go t_ab12cd {"validated":[["config /c.json",{"input":"{}","value":{}}]]}'),
    ).toEqual({ id: 't_ab12cd', validated: [['config /c.json', { input: '{}', value: {} }]] });
    expect(heardTask('go t_ab12cd {unreadable')).toEqual({ id: 't_ab12cd' });
    expect(heardTask('go t_ab12cd')).toEqual({ id: 't_ab12cd' });
    expect(heardTask('go')).toBeUndefined();
    expect(heardTask('')).toBeUndefined();
    expect(heardTask('gone t_ab12cd {}')).toBeUndefined();
    expect(heardTask('go ../../etc {}')).toBeUndefined();
  });
});
