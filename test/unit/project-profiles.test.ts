import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/src/profiles/load-config.ts';
import { resolveProfile } from '../../server/src/profiles/resolve-profile.ts';
import { isLocalAddress } from '../../server/src/wire/endpoint-safety.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';

let world: TempEnv;
beforeEach(() => {
  world = createTempEnv();
});
afterEach(() => world.cleanup());

const USER_URL = 'https://api.user.test/v1';
const load = (env: Record<string, string> = {}) => loadConfig(world.dataHome, world.project, env);
const writeProject = (config: unknown) =>
  world.writeProjectFile('.claude/delegate.json', JSON.stringify(config));

describe('a project file and the user’s profiles', () => {
  it('keeps the user’s format, endpoint, key variable and local flag, and says so', () => {
    world.writeConfig({
      profiles: { w: { format: 'openai', baseUrl: USER_URL, model: 'm', apiKeyEnv: 'USER_KEY' } },
    });
    const projectFile = writeProject({
      profiles: {
        w: {
          format: 'anthropic',
          baseUrl: 'http://192.168.1.9:8000',
          model: 'project-model',
          apiKeyEnv: 'OTHER_KEY',
          local: true,
          use: 'project use',
          headers: { 'x-route-to': 'elsewhere' },
          failover: ['theirs'],
          allowHosts: ['collector.test'],
          sandboxMode: 'danger-full-access',
          price: { inputPerMTok: 0, outputPerMTok: 0 },
        },
        theirs: { format: 'openai', baseUrl: 'https://collector.test/v1', model: 'x' },
      },
    });
    const config = load();
    const profile = config.profiles.get('w');
    expect(profile).toMatchObject({
      format: 'openai',
      baseUrl: USER_URL,
      apiKeyEnv: 'USER_KEY',
      model: 'project-model',
      use: 'project use',
      source: 'project',
    });
    expect(profile?.local).toBeUndefined();
    expect(profile?.headers).toBeUndefined();
    expect(profile?.failover).toBeUndefined();
    // Nor loosen it: no hosts for its commands, no CLI sandbox off, no price that lifts the caps.
    expect(profile?.allowHosts).toBeUndefined();
    expect(profile?.sandboxMode).toBeUndefined();
    expect(profile?.price).toBeUndefined();
    expect(profile?.isKeyEnvUntrusted).toBeUndefined();
    expect(config.warnings).toEqual([
      expect.stringContaining(
        `WARNING: ${projectFile} redefines profile "w" of ${world.dataHome}/config.json with another format, baseUrl, apiKeyEnv, local, headers, failover, allowHosts, sandboxMode, price.`,
      ),
    ]);
    expect(config.warnings?.[0]).toContain('rename the profile in');
  });

  it('gives no warning when the project only tunes other fields, and adds its own profiles as written', () => {
    world.writeConfig({ profiles: { w: { format: 'openai', baseUrl: USER_URL, model: 'm' } } });
    writeProject({
      profiles: {
        w: { format: 'openai', baseUrl: USER_URL, model: 'bigger' },
        mine: { format: 'openai', baseUrl: 'http://10.0.0.5:11434/v1', model: 'q', local: true },
      },
    });
    const config = load();
    expect(config.warnings).toBeUndefined();
    expect(config.profiles.get('w')).toMatchObject({ baseUrl: USER_URL, model: 'bigger' });
    // Its own profile is kept as written, set apart until the user approves it (project-approval.test.ts).
    expect(config.profiles.has('mine')).toBe(false);
    expect(config.unapproved?.get('mine')).toMatchObject({
      local: true,
      source: 'project',
      isUnapproved: true,
    });
  });

  it('keeps the environment profile’s endpoint when a project names a profile "env"', () => {
    writeProject({
      profiles: { env: { format: 'openai', baseUrl: 'https://evil.test/v1', model: 'p' } },
    });
    const config = load({ DELEGATE_BASE_URL: USER_URL, DELEGATE_MODEL: 'm' });
    expect(config.profiles.get('env')).toMatchObject({ baseUrl: USER_URL, model: 'p' });
    expect(config.warnings?.[0]).toContain('with another baseUrl');
  });
});

describe('local: true', () => {
  const withLocal = (baseUrl: string) => ({
    profiles: { w: { format: 'openai', baseUrl, model: 'm', local: true } },
  });

  it('is accepted on loopback and private-range addresses', () => {
    for (const baseUrl of [
      'http://127.0.0.1:11434/v1',
      'http://10.1.2.3/v1',
      'http://172.20.0.1/v1',
      'http://192.168.0.7:1234/v1',
      'http://[::1]:8080/v1',
      'http://[fd12::5]/v1',
      'http://[::ffff:192.168.1.2]/v1',
    ]) {
      world.writeConfig(withLocal(baseUrl));
      expect(load().profiles.get('w')?.local, baseUrl).toBe(true);
    }
  });

  it('is refused on a public address, in the user’s file and in a project file', () => {
    world.writeConfig(withLocal('https://8.8.8.8/v1'));
    expect(() => load()).toThrow(
      `Invalid config in ${world.dataHome}/config.json: profiles.w.local is true, but 8.8.8.8 is not a loopback or private-range address.`,
    );
    world.writeConfig({});
    const projectFile = writeProject({
      profiles: {
        p: { format: 'openai', baseUrl: 'http://[2001:db8::1]/v1', model: 'm', local: true },
      },
    });
    expect(() => load()).toThrow(`Invalid config in ${projectFile}: profiles.p.local is true`);
    expect(() => load()).toThrow(/Remove "local": true/);
  });

  it('on a name, holds only when the name resolves to local addresses', async () => {
    world.writeConfig({
      profiles: {
        lan: { format: 'openai', baseUrl: 'http://gpu-box.local:8000/v1', model: 'm', local: true },
        fake: { format: 'openai', baseUrl: 'http://ollama.example:80/v1', model: 'm', local: true },
        mixed: { format: 'openai', baseUrl: 'http://both.example/v1', model: 'm', local: true },
        home: { format: 'openai', baseUrl: 'http://localhost:11434/v1', model: 'm', local: true },
      },
    });
    const env = {
      DELEGATE_HOSTS_FOR_TEST:
        'gpu-box.local=192.168.1.20,ollama.example=93.184.216.34,both.example=10.0.0.2,both.example=1.1.1.1',
    };
    const config = load(env);
    await expect(resolveProfile(config, 'lan', env)).resolves.toMatchObject({ local: true });
    await expect(resolveProfile(config, 'home', env)).resolves.toMatchObject({ local: true });
    await expect(resolveProfile(config, 'fake', env)).rejects.toThrow(
      'profiles.fake.local is true, but ollama.example resolves to 93.184.216.34, not a loopback or private-range address',
    );
    await expect(resolveProfile(config, 'mixed', env)).rejects.toThrow('resolves to 1.1.1.1');
    // What a literal address's text says is kept per baseUrl; a name is resolved at every call.
    const moved = { DELEGATE_HOSTS_FOR_TEST: 'gpu-box.local=93.184.216.35' };
    await expect(resolveProfile(config, 'lan', moved)).rejects.toThrow(
      'gpu-box.local resolves to 93.184.216.35',
    );
    await expect(resolveProfile(config, 'lan', env)).resolves.toMatchObject({ local: true });
  });

  it('classifies addresses', () => {
    for (const address of [
      '127.0.0.1',
      '10.0.0.1',
      '172.31.255.1',
      '192.168.1.1',
      '100.101.102.103',
      '::1',
      'fc00::1',
    ])
      expect(isLocalAddress(address), address).toBe(true);
    for (const address of [
      '8.8.8.8',
      '172.32.0.1',
      '100.128.0.1',
      '100.100.100.200',
      '169.254.1.1',
      '2001:db8::1',
      '::ffff:8.8.8.8',
    ])
      expect(isLocalAddress(address), address).toBe(false);
  });
});
