import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/src/profiles/load-config.ts';
import { resolveDataHome, resolveProjectDir } from '../../server/src/config/paths.ts';
import { resolveProfile } from '../../server/src/profiles/resolve-profile.ts';
import { firstChatModel } from '../../server/src/profiles/chat-models.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';

let world: TempEnv;
beforeEach(() => {
  world = createTempEnv();
});
afterEach(() => world.cleanup());

const noServer = () => Promise.resolve(undefined);
const profile = (model: string, extra: Record<string, unknown> = {}) => ({
  format: 'openai',
  baseUrl: 'http://127.0.0.1:11434/v1',
  model,
  ...extra,
});

describe('paths', () => {
  it('uses DELEGATE_HOME, else ~/.delegate; CLAUDE_PROJECT_DIR, else the working directory', () => {
    expect(resolveDataHome({ DELEGATE_HOME: '/x/y', HOME: '/h' })).toBe('/x/y');
    expect(resolveDataHome({ HOME: '/h' })).toBe('/h/.delegate');
    expect(resolveProjectDir({ CLAUDE_PROJECT_DIR: '/p' }, '/cwd')).toBe('/p');
    expect(resolveProjectDir({}, '/cwd')).toBe('/cwd');
  });
});

describe('loadConfig', () => {
  it('merges the project file over the user config, project winning per profile and default', () => {
    world.writeConfig({
      defaultProfile: 'a',
      profiles: { a: profile('user-a'), b: profile('user-b') },
    });
    mkdirSync(join(world.project, '.claude'));
    writeFileSync(
      join(world.project, '.claude', 'delegate.json'),
      JSON.stringify({ defaultProfile: 'b', profiles: { b: profile('project-b') } }),
    );
    const config = loadConfig(world.dataHome, world.project, {});
    expect(config.defaultProfile).toBe('b');
    expect(config.profiles.get('a')?.model).toBe('user-a');
    expect(config.profiles.get('b')).toMatchObject({ model: 'project-b', source: 'project' });
    expect(config.files).toHaveLength(2);
  });

  it('lets a project file lower the spending caps but never raise them; task settings merge per field', () => {
    world.writeConfig({ budget: { dailyUsd: 5, perTaskUsd: 1 }, tasks: { fixRounds: 3 } });
    mkdirSync(join(world.project, '.claude'));
    writeFileSync(
      join(world.project, '.claude', 'delegate.json'),
      JSON.stringify({
        budget: { dailyUsd: 500, perTaskUsd: 0.25 },
        tasks: { reviewProfile: 'b' },
        profiles: { b: profile('project-b') },
      }),
    );
    const config = loadConfig(world.dataHome, world.project, {});
    expect(config.budget).toEqual({ dailyUsd: 5, perTaskUsd: 0.25 });
    expect(config.tasks).toEqual({ fixRounds: 3, reviewProfile: 'b' });
  });

  it('names the file and the default that does not exist', () => {
    world.writeConfig({ defaultProfile: 'ghost', profiles: { a: profile('m') } });
    expect(() => loadConfig(world.dataHome, world.project, {})).toThrow(
      /config\.json: defaultProfile "ghost" is not a profile \(profiles: a\)\. Set it to one of them or remove it\./,
    );
  });

  it('explains a key pasted where a variable name belongs', () => {
    world.writeConfig({ profiles: { a: profile('m', { apiKeyEnv: 'sk-live-123' }) } });
    expect(() => loadConfig(world.dataHome, world.project, {})).toThrow(
      /profiles\.a\.apiKeyEnv: must be the NAME of an environment variable, not the key itself/,
    );
  });

  it('says which field is missing', () => {
    world.writeConfig({
      profiles: { a: { format: 'openai', baseUrl: 'http://127.0.0.1:1234/v1' } },
    });
    expect(() => loadConfig(world.dataHome, world.project, {})).toThrow(
      /- profiles\.a\.model: is required; it must be the model name the endpoint serves/,
    );
  });

  it('builds the environment-only profile and marks a loopback one local', () => {
    const config = loadConfig(world.dataHome, world.project, {
      DELEGATE_BASE_URL: 'http://localhost:8080/v1',
      DELEGATE_MODEL: 'm',
    });
    expect(config.profiles.get('env')).toMatchObject({
      format: 'openai',
      model: 'm',
      local: true,
      source: 'env',
    });
  });

  it('names the variables of a broken environment profile', () => {
    expect(() =>
      loadConfig(world.dataHome, world.project, {
        DELEGATE_BASE_URL: 'http://h/v1',
        DELEGATE_FORMAT: 'grpc',
      }),
    ).toThrow(
      /- DELEGATE_FORMAT: must be one of "openai", "anthropic", "copilot", "claude-cli", "codex-cli", "gemini-cli"\n- DELEGATE_MODEL: /,
    );
  });
});

describe('runners in the config', () => {
  const runner = (fields: Record<string, unknown>) => ({
    type: 'ssh',
    host: 'build-1.lan',
    workdir: '/srv/delegate',
    ...fields,
  });
  const refusal = (fields: Record<string, unknown>) => {
    world.writeConfig({ runners: { build: runner(fields) } });
    try {
      loadConfig(world.dataHome, world.project, world.env);
    } catch (error) {
      return (error as Error).message;
    }
    return 'accepted';
  };

  it('takes a runner with every field', () => {
    world.writeConfig({
      runners: {
        build: runner({
          port: 2222,
          user: 'ci',
          identityFile: '~/.ssh/id_ed25519',
          knownHostsFile: '/etc/delegate/known_hosts',
          maxTasks: 2,
        }),
      },
    });
    const config = loadConfig(world.dataHome, world.project, world.env);
    expect(config.runners?.get('build')).toMatchObject({ host: 'build-1.lan', port: 2222 });
  });

  // Nothing of a runner's may reach ssh as an option or a second word.
  it.each([
    [{ host: '-oProxyCommand=touch /tmp/pwned' }, 'host'],
    [{ host: 'a b' }, 'host'],
    [{ host: 'h;id' }, 'host'],
    [{ host: '' }, 'host'],
    [{ user: '-oProxyCommand=x' }, 'user'],
    [{ user: 'a b' }, 'user'],
    [{ port: 0 }, 'port'],
    [{ port: 70000 }, 'port'],
    [{ workdir: 'relative/dir' }, 'workdir'],
    [{ workdir: '/a\nb' }, 'workdir'],
    [{ identityFile: 'id_rsa' }, 'identityFile'],
    [{ knownHostsFile: '-F' }, 'knownHostsFile'],
    [{ maxTasks: 0 }, 'maxTasks'],
    [{ type: 'docker' }, 'type'],
    [{ password: 'x' }, 'password'],
  ])('refuses %j, naming the field', (fields, field) => {
    expect(refusal(fields)).toContain(field);
  });

  it('ignores runners a project file defines, with a warning', () => {
    world.writeConfig({ runners: { mine: runner({}) } });
    mkdirSync(join(world.project, '.claude'));
    writeFileSync(
      join(world.project, '.claude', 'delegate.json'),
      JSON.stringify({ runners: { theirs: runner({ host: 'evil.example' }) } }),
    );
    const config = loadConfig(world.dataHome, world.project, world.env);
    expect([...(config.runners?.keys() ?? [])]).toEqual(['mine']);
    expect(config.warnings?.join('\n')).toContain('defines runners (theirs)');
  });
});

describe('resolveProfile', () => {
  it('prefers the named profile, then the configured default, then env, then the only profile', async () => {
    world.writeConfig({ profiles: { only: profile('m') } });
    const single = loadConfig(world.dataHome, world.project, {});
    expect((await resolveProfile(single, undefined, {}, noServer)).name).toBe('only');
    const withEnv = loadConfig(world.dataHome, world.project, {
      DELEGATE_BASE_URL: 'http://h/v1',
      DELEGATE_MODEL: 'e',
    });
    expect((await resolveProfile(withEnv, undefined, {}, noServer)).name).toBe('env');
    expect((await resolveProfile(withEnv, 'only', {}, noServer)).name).toBe('only');
    world.writeConfig({ defaultProfile: 'b', profiles: { a: profile('m'), b: profile('n') } });
    const withDefault = loadConfig(world.dataHome, world.project, {
      DELEGATE_BASE_URL: 'http://h/v1',
      DELEGATE_MODEL: 'e',
    });
    expect((await resolveProfile(withDefault, undefined, {}, noServer)).name).toBe('b');
  });

  it('asks for a choice when several profiles have no default', async () => {
    world.writeConfig({ profiles: { a: profile('m'), b: profile('n') } });
    const config = loadConfig(world.dataHome, world.project, {});
    await expect(resolveProfile(config, undefined, {}, noServer)).rejects.toThrow(
      /Several profiles \(a, b\) and no defaultProfile: pass profile, or set "defaultProfile" in .*config\.json\./,
    );
  });

  it('falls back to a discovered local server, naming it', async () => {
    const config = loadConfig(world.dataHome, world.project, {});
    const found = await resolveProfile(config, undefined, {}, () =>
      Promise.resolve({
        name: 'Ollama',
        baseUrl: 'http://127.0.0.1:11434/v1',
        models: ['qwen3:8b'],
        model: 'qwen3:8b',
        skipped: [],
      }),
    );
    expect(found).toMatchObject({
      name: 'local',
      model: 'qwen3:8b',
      local: true,
      source: 'discovered',
      discovered: { server: 'Ollama', baseUrl: 'http://127.0.0.1:11434/v1', model: 'qwen3:8b' },
    });
  });

  it('answers to the discovered profile\'s name "local" only while no profile has it', async () => {
    const config = loadConfig(world.dataHome, world.project, {});
    const server = {
      name: 'vLLM',
      baseUrl: 'http://127.0.0.1:8000/v1',
      models: ['m'],
      model: 'm',
      skipped: [],
    };
    expect((await resolveProfile(config, 'local', {}, () => Promise.resolve(server))).model).toBe(
      'm',
    );
    await expect(resolveProfile(config, 'local', {}, noServer)).rejects.toThrow(
      /Unknown profile "local"/,
    );
  });

  it('skips models that cannot chat by name when the server cannot say', async () => {
    const server = { name: 'LM Studio', baseUrl: 'http://127.0.0.1:2/v1' };
    const models = ['text-embedding-nomic', 'bge-reranker', 'whisper-1', 'kokoro-tts', 'qwen3'];
    expect(await firstChatModel(server, models, 100)).toEqual({
      model: 'qwen3',
      skipped: models.slice(0, 4),
    });
    expect(await firstChatModel(server, ['all-embeddings'], 100)).toBeUndefined();
  });
});

describe('loadConfig at every call: the last read is reused only while nothing it came from changed', () => {
  const settle = () => new Promise((resolve) => setTimeout(resolve, 150));
  const modelOf = (env: Record<string, string> = {}) =>
    loadConfig(world.dataHome, world.project, env).profiles.get('w')?.model;

  it('reuses the same config while the files are settled and unchanged', async () => {
    world.writeConfig({ profiles: { w: profile('m1') } });
    await settle();
    const first = loadConfig(world.dataHome, world.project, {});
    expect(loadConfig(world.dataHome, world.project, {})).toBe(first);
  });

  // Each change takes effect at the very next read, however soon after the last one.
  const changes: Array<[name: string, change: () => void, expected: string | undefined]> = [
    [
      'config.json rewritten, same size',
      () => world.writeConfig({ profiles: { w: profile('m2') } }),
      'm2',
    ],
    [
      'a project file appears',
      () =>
        world.writeProjectFile(
          '.claude/delegate.json',
          JSON.stringify({ profiles: { w: profile('p1') } }),
        ),
      'p1',
    ],
    ['config.json removed', () => rmSync(join(world.dataHome, 'config.json')), undefined],
  ];
  it.each(changes)('%s', async (_name, change, expected) => {
    world.writeConfig({ profiles: { w: profile('m1') } });
    await settle();
    expect(modelOf()).toBe('m1');
    expect(modelOf()).toBe('m1');
    change();
    expect(modelOf()).toBe(expected);
  });

  it('reads the environment profile anew when its variables change', async () => {
    world.writeConfig({ profiles: { w: profile('m1') } });
    await settle();
    const env = { DELEGATE_BASE_URL: 'http://127.0.0.1:9/v1', DELEGATE_MODEL: 'e1' };
    const envModel = (variables: Record<string, string>) =>
      loadConfig(world.dataHome, world.project, variables).profiles.get('env')?.model;
    expect(envModel(env)).toBe('e1');
    expect(envModel({ ...env, DELEGATE_MODEL: 'e2' })).toBe('e2');
    expect(envModel({})).toBeUndefined();
  });
});
