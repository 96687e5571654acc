import { describe, expect, it } from 'vitest';
import {
  briefProfiles,
  largeReadSettings,
  thresholdFor,
  type RawConfig,
} from '../../server/src/config/read-settings.ts';

const config = (
  json: Record<string, unknown>,
  source: RawConfig['source'] = 'config',
  file = '/c.json',
): RawConfig => ({ file, source, json });

describe('largeReadSettings', () => {
  const defaults = { toolThresholdBytes: {}, shouldDigest: true, allowCommands: [] };

  it('defaults to deny over 16 KB for every tool, digests on', () => {
    const settings = largeReadSettings([], {});
    expect(settings).toEqual({ mode: 'deny', thresholdBytes: 16_384, ...defaults });
    expect(thresholdFor(settings, 'Bash')).toBe(16_384);
    expect(thresholdFor(settings, 'Read')).toBe(16_384);
    const higher = largeReadSettings([config({ largeRead: { thresholdKb: 100 } })], {});
    expect(thresholdFor(higher, 'Read')).toBe(102_400);
    const own = largeReadSettings([config({ largeRead: { toolThresholdKb: { Read: 8 } } })], {});
    expect(thresholdFor(own, 'Read')).toBe(8_192);
  });

  it('layers config, project file and environment, later winning; ignores wrong types', () => {
    const user = config({ largeRead: { thresholdKb: 100, mode: 'ask' } });
    const project = config({ largeRead: { thresholdKb: 'lots', mode: 'maybe', digest: 'no' } });
    expect(largeReadSettings([user, project], {})).toEqual({
      mode: 'ask',
      thresholdBytes: 102_400,
      ...defaults,
    });
    expect(largeReadSettings([user, config({ largeRead: { thresholdKb: 10 } })], {})).toEqual({
      mode: 'ask',
      thresholdBytes: 10_240,
      ...defaults,
    });
    expect(
      largeReadSettings([user], { DELEGATE_LARGE_READ: 'off', DELEGATE_LARGE_READ_KB: '8' }),
    ).toEqual({ mode: 'off', thresholdBytes: 8_192, ...defaults, shouldDigest: false });
  });

  it('takes per-tool thresholds (0 = never digest), the digest switch and allowed commands from every file', () => {
    const user = config({
      largeRead: {
        toolThresholdKb: { Bash: 32, Nope: 1, Grep: -1 },
        allowCommands: ['git diff', 7, ' '],
      },
    });
    const project = config({
      largeRead: {
        toolThresholdKb: { mcp: 0, Read: 'x' },
        digest: false,
        allowCommands: ['npm test'],
      },
    });
    expect(largeReadSettings([user, project], {})).toEqual({
      mode: 'deny',
      thresholdBytes: 16_384,
      toolThresholdBytes: { Bash: 32_768, mcp: 0 },
      shouldDigest: false,
      allowCommands: ['git diff', 'npm test'],
    });
  });
});

describe('briefProfiles', () => {
  const PROJECT_FILE = '/nowhere/p/.claude/delegate.json';

  it('takes name, use, key variable and local flag, the project winning per name but for the key and local', () => {
    const user = config({
      profiles: { a: { use: 'user a', apiKeyEnv: 'A_KEY' }, b: { use: 'b', local: true } },
      projectApprovals: {
        [PROJECT_FILE]: [
          { format: 'openai', baseUrl: 'http://10.0.0.9:8000/v1' },
          { format: 'copilot', baseUrl: 'https://api.githubcopilot.com' },
        ],
      },
    });
    const project = config(
      {
        profiles: {
          a: { use: 'project a', local: true },
          c: 'not an object',
          d: { format: 'openai', baseUrl: 'http://10.0.0.9:8000/v1/', apiKeyEnv: 'D_KEY' },
          gh: { format: 'copilot', model: 'gpt-4.1' },
        },
      },
      'project',
      PROJECT_FILE,
    );
    expect(briefProfiles([user, project])).toEqual([
      { name: 'a', use: 'project a', apiKeyEnv: 'A_KEY' },
      { name: 'b', use: 'b', local: true },
      { name: 'd', apiKeyEnv: 'D_KEY' },
      { name: 'gh' },
    ]);
  });

  it('leaves out a profile only the project defines until its endpoint is approved for that file', () => {
    const mine = { format: 'openai', baseUrl: 'https://collector.test/v1', use: 'theirs' };
    const project = config({ profiles: { mine } }, 'project', PROJECT_FILE);
    const approving = (file: string, baseUrl: string) =>
      config({ projectApprovals: { [file]: [{ format: 'openai', baseUrl }] } });
    expect(briefProfiles([project])).toEqual([]);
    // The project file cannot approve itself, nor does an approval for another file or endpoint count.
    const selfApproved = config(
      { profiles: { mine }, projectApprovals: { [PROJECT_FILE]: [mine] } },
      'project',
      PROJECT_FILE,
    );
    expect(briefProfiles([selfApproved])).toEqual([]);
    expect(
      briefProfiles([approving('/other/.claude/delegate.json', mine.baseUrl), project]),
    ).toEqual([]);
    expect(briefProfiles([approving(PROJECT_FILE, 'https://collector.test/v2'), project])).toEqual(
      [],
    );
    expect(briefProfiles([approving(PROJECT_FILE, mine.baseUrl), project])).toEqual([
      { name: 'mine', use: 'theirs' },
    ]);
  });
});
