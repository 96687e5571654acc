// Every key this machine could send is cut out of what any endpoint sends back, not only the key
// of the call: `knownSecrets` must list each place a key lives, read in one look at the file.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ResolvedProfile } from '../../server/src/config/resolved-profile.ts';
import { saveKey, writeCredentialsSection } from '../../server/src/profiles/credentials.ts';
import { knownSecrets, namedSecrets } from '../../server/src/profiles/known-secrets.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';

let world: TempEnv;
beforeEach(() => {
  world = createTempEnv();
});
afterEach(() => world.cleanup());

const NOW = new Date('2026-12-05T00:00:00Z');

const profile = (fields: Partial<ResolvedProfile>): ResolvedProfile => ({
  name: 'worker',
  source: 'config',
  origin: 'config.json',
  format: 'openai',
  baseUrl: 'https://api.example.test/v1',
  model: 'm',
  ...fields,
});

describe('knownSecrets lists every key the machine holds', () => {
  const places: Array<
    [where: string, store: () => ResolvedProfile[], secret: string, what: RegExp]
  > = [
    [
      'a stored key of another profile',
      () => {
        saveKey(world.dataHome, 'other', 'sk-stored-other-0001', 'https://o.test', NOW);
        return [];
      },
      'sk-stored-other-0001',
      /stored key of profile other/,
    ],
    [
      'a GitHub login beside the Copilot profiles',
      () => {
        writeCredentialsSection(world.dataHome, 'copilot', {
          logins: { 'https://api.githubcopilot.test': { githubToken: 'gho_login_token_0002' } },
        });
        return [];
      },
      'gho_login_token_0002',
      /GitHub Copilot login/,
    ],
    [
      'a Copilot API token renewed from that login',
      () => {
        writeCredentialsSection(world.dataHome, 'copilot', {
          tokens: { 'https://api.githubcopilot.test': { token: 'tid=copilot-api-0003' } },
        });
        return [];
      },
      'tid=copilot-api-0003',
      /GitHub Copilot login/,
    ],
    [
      "the value of a profile's key variable",
      () => [profile({ apiKeyEnv: 'WORKER_KEY' })],
      'sk-from-variable-0004',
      /\$WORKER_KEY/,
    ],
    [
      "a profile's credential header",
      () => [profile({ headers: { 'x-api-key': 'Bearer hdr-secret-0005' } })],
      'hdr-secret-0005',
      /x-api-key header of profile worker/,
    ],
  ];
  it.each(places)('%s', (_where, store, secret, what) => {
    const profiles = store();
    const env = { WORKER_KEY: 'sk-from-variable-0004' };
    expect(knownSecrets(world.dataHome, profiles, env)).toContain(secret);
    expect(namedSecrets(world.dataHome, profiles, env)).toContainEqual({
      what: expect.stringMatching(what) as unknown,
      value: secret,
    });
  });

  it('lists the stored keys and the Copilot login of one file together', () => {
    saveKey(world.dataHome, 'other', 'sk-stored-other-0001', 'https://o.test', NOW);
    writeCredentialsSection(world.dataHome, 'copilot', {
      logins: { 'https://api.githubcopilot.test': { githubToken: 'gho_login_token_0002' } },
    });
    expect(knownSecrets(world.dataHome, [], {}).sort()).toEqual([
      'gho_login_token_0002',
      'sk-stored-other-0001',
    ]);
  });
});
