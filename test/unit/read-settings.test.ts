import { describe, expect, it } from 'vitest';
import {
  briefProfiles,
  largeReadSettings,
  type RawConfig,
} from '../../server/src/config/read-settings.ts';

const config = (json: Record<string, unknown>, file = '/c.json'): RawConfig => ({ file, json });

describe('largeReadSettings', () => {
  it('defaults to deny over 50 KB', () => {
    expect(largeReadSettings([], {})).toEqual({ mode: 'deny', thresholdBytes: 51_200 });
  });

  it('layers config, project file and environment, later winning; ignores wrong types', () => {
    const user = config({ largeRead: { thresholdKb: 100, mode: 'ask' } });
    const project = config({ largeRead: { thresholdKb: 'lots', mode: 'maybe' } });
    expect(largeReadSettings([user, project], {})).toEqual({
      mode: 'ask',
      thresholdBytes: 102_400,
    });
    expect(largeReadSettings([user, config({ largeRead: { thresholdKb: 10 } })], {})).toEqual({
      mode: 'ask',
      thresholdBytes: 10_240,
    });
    expect(
      largeReadSettings([user], { DELEGATE_LARGE_READ: 'off', DELEGATE_LARGE_READ_KB: '8' }),
    ).toEqual({
      mode: 'off',
      thresholdBytes: 8_192,
    });
  });
});

describe('briefProfiles', () => {
  it('takes name, use, key variable and local flag, the project winning per name but for the key and local', () => {
    const user = config({
      profiles: { a: { use: 'user a', apiKeyEnv: 'A_KEY' }, b: { use: 'b', local: true } },
    });
    const project = config({
      profiles: {
        a: { use: 'project a', local: true },
        c: 'not an object',
        d: { apiKeyEnv: 'D_KEY', local: true },
      },
    });
    expect(briefProfiles([user, project])).toEqual([
      { name: 'a', use: 'project a', apiKeyEnv: 'A_KEY' },
      { name: 'b', use: 'b', local: true },
      { name: 'd', apiKeyEnv: 'D_KEY', local: true },
    ]);
  });
});
