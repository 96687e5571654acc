import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  readCredentialsSection,
  saveKey,
  storedKey,
  writeCredentialsSection,
} from '../../server/src/profiles/credentials.ts';
import { loadConfig } from '../../server/src/profiles/load-config.ts';
import { githubUrls } from '../../server/src/config/copilot-endpoints.ts';
import { tokenTimes } from '../../server/src/profiles/copilot/copilot-token.ts';
import { nextIntervalS } from '../../server/src/profiles/copilot/device-flow.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';

let world: TempEnv;
beforeEach(() => {
  world = createTempEnv();
});
afterEach(() => world.cleanup());

const load = (profiles: Record<string, unknown>, env: Record<string, string> = {}) => {
  world.writeConfig({ profiles });
  return loadConfig(world.dataHome, world.project, env);
};

describe('copilot profiles in config.json', () => {
  it('default to the Copilot API and to a price of 0 (the subscription pays)', () => {
    const profile = load({ cp: { format: 'copilot', model: 'gpt-4.1' } }).profiles.get('cp');
    expect(profile).toMatchObject({
      format: 'copilot',
      baseUrl: 'https://api.githubcopilot.com',
      price: { inputPerMTok: 0, outputPerMTok: 0, cachedInputPerMTok: 0 },
    });
    expect(profile?.local).toBeUndefined();
  });

  it('keep a baseUrl and a price they set', () => {
    const price = { inputPerMTok: 1, outputPerMTok: 2 };
    const profile = load({
      cp: {
        format: 'copilot',
        baseUrl: 'https://api.business.githubcopilot.com',
        model: 'm',
        price,
      },
    }).profiles.get('cp');
    expect(profile).toMatchObject({ baseUrl: 'https://api.business.githubcopilot.com', price });
  });

  it('are never local, take no key variable, and still need a model', () => {
    expect(() => load({ cp: { format: 'copilot', model: 'm', local: true } })).toThrow(
      '- profiles.cp.local: must not be true: a copilot profile calls GitHub',
    );
    expect(() => load({ cp: { format: 'copilot', model: 'm', apiKeyEnv: 'GH_TOKEN' } })).toThrow(
      '- profiles.cp.apiKeyEnv: is not used by copilot: log in with provider_key (GitHub device flow)',
    );
    expect(() => load({ cp: { format: 'copilot' } })).toThrow(
      /- profiles\.cp\.model: is required; it must be the model name/,
    );
  });

  it('other formats still require a baseUrl, with the same message as before', () => {
    expect(() => load({ o: { format: 'openai', model: 'm' } })).toThrow(
      '- profiles.o.baseUrl: is required; it must be an http(s) URL such as "http://127.0.0.1:11434/v1"',
    );
  });

  it('the environment-only profile may be copilot with just a model', () => {
    world.writeConfig({});
    const config = loadConfig(world.dataHome, world.project, {
      DELEGATE_FORMAT: 'copilot',
      DELEGATE_MODEL: 'gpt-4.1',
    });
    expect(config.profiles.get('env')).toMatchObject({
      format: 'copilot',
      baseUrl: 'https://api.githubcopilot.com',
    });
  });
});

describe('device-flow polling interval', () => {
  it('stays while pending; slow_down takes GitHub’s new interval, else adds 5 s', () => {
    expect(nextIntervalS(5, { kind: 'pending' })).toBe(5);
    expect(nextIntervalS(5, { kind: 'slow_down' })).toBe(10);
    expect(nextIntervalS(5, { kind: 'slow_down', intervalS: 12 })).toBe(12);
    // Never faster than before, never under a second.
    expect(nextIntervalS(5, { kind: 'slow_down', intervalS: 2 })).toBe(5);
    expect(nextIntervalS(0, { kind: 'slow_down', intervalS: 0.1 })).toBe(1);
  });
});

describe('Copilot API token times', () => {
  const now = 1_800_000_000_000;
  const seconds = now / 1000;
  it('refresh a minute before refresh_in, never after a minute before expiry', () => {
    const times = tokenTimes('t', { expires_at: seconds + 1800, refresh_in: 1500 }, now);
    expect(times).toEqual({ token: 't', expiresAt: now + 1_800_000, refreshAt: now + 1_440_000 });
    expect(tokenTimes('t', { expires_at: seconds + 600, refresh_in: 1500 }, now).refreshAt).toBe(
      now + 540_000,
    );
  });
  it('without refresh_in, five minutes before expiry; a short token is due at once', () => {
    expect(tokenTimes('t', { expires_at: seconds + 1800 }, now).refreshAt).toBe(now + 1_500_000);
    expect(tokenTimes('t', { expires_at: seconds + 2, refresh_in: 1 }, now).refreshAt).toBe(now);
  });
  it('keeps endpoints.api only when it is an http(s) URL, without a trailing slash', () => {
    const api = (value: unknown) => tokenTimes('t', { endpoints: { api: value } }, now).api;
    expect(api('https://api.individual.githubcopilot.com/')).toBe(
      'https://api.individual.githubcopilot.com',
    );
    expect(api('javascript:alert(1)')).toBeUndefined();
    expect(api(42)).toBeUndefined();
  });
});

describe('GitHub addresses', () => {
  it('are github.com and api.github.com unless the test variables point elsewhere', () => {
    expect(githubUrls({})).toEqual({ web: 'https://github.com', api: 'https://api.github.com' });
    expect(
      githubUrls({
        DELEGATE_GITHUB_URL_FOR_TEST: ' http://127.0.0.1:9/ ',
        DELEGATE_GITHUB_API_URL_FOR_TEST: 'http://127.0.0.1:8',
      }),
    ).toEqual({ web: 'http://127.0.0.1:9', api: 'http://127.0.0.1:8' });
  });
});

describe('credentials.json sections', () => {
  it('keys and the copilot section are written without losing each other, always 0600', () => {
    const file = join(world.dataHome, 'credentials.json');
    writeCredentialsSection(world.dataHome, 'copilot', { logins: { x: 1 } });
    saveKey(world.dataHome, 'w', 'sk-key-0123456789', 'https://a.test', new Date(0));
    expect(readCredentialsSection(world.dataHome, 'copilot')).toEqual({ logins: { x: 1 } });
    writeCredentialsSection(world.dataHome, 'copilot', { logins: { y: 2 } });
    expect(storedKey(world.dataHome, 'w')?.key).toBe('sk-key-0123456789');
    writeCredentialsSection(world.dataHome, 'copilot', undefined);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      version: 1,
      keys: {
        w: {
          key: 'sk-key-0123456789',
          origin: 'https://a.test',
          savedAt: '1970-01-01T00:00:00.000Z',
        },
      },
    });
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });
});
