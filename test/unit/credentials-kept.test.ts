import { chmodSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { credentialsPath } from '../../server/src/config/paths.ts';
import {
  readCredentials,
  readCredentialsSection,
  removeKey,
  saveKey,
  writeCredentialsSection,
} from '../../server/src/profiles/credentials.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';

let world: TempEnv;
beforeEach(() => {
  world = createTempEnv();
});
afterEach(() => world.cleanup());

const settle = () => new Promise((resolve) => setTimeout(resolve, 150));
const NOW = new Date('2026-12-05T00:00:00Z');
const keyOf = (profile: string) => readCredentials(world.dataHome).keys[profile]?.key;

/** The file as another process writes it: the same size as before, the old times put back. */
function rewriteKeepingTimes(from: string, to: string): void {
  const file = credentialsPath(world.dataHome);
  const before = statSync(file);
  const text = readFileSync(file, 'utf8');
  expect(from.length).toBe(to.length);
  writeFileSync(file, text.replace(from, to));
  utimesSync(file, before.atime, before.mtime);
}

describe('credentials.json at every model call: read again only when it changed', () => {
  it('reuses the last read while the file is settled and unchanged', async () => {
    saveKey(world.dataHome, 'w', 'sk-first-key-0001', 'https://api.example.test', NOW);
    await settle();
    const first = readCredentials(world.dataHome).keys;
    expect(readCredentials(world.dataHome).keys).toBe(first);
    expect(first.w?.key).toBe('sk-first-key-0001');
  });

  // Each change shows at the very next read, however soon after the last one.
  const changes: Array<[name: string, change: () => void, expected: string | undefined]> = [
    [
      'a key stored again',
      () => saveKey(world.dataHome, 'w', 'sk-other-key-0002', 'https://api.example.test', NOW),
      'sk-other-key-0002',
    ],
    ['the key removed', () => void removeKey(world.dataHome, 'w'), undefined],
    ['the file removed', () => rmSync(credentialsPath(world.dataHome)), undefined],
    [
      'rewritten in place, same size, its old times put back',
      () => rewriteKeepingTimes('sk-first-key-0001', 'sk-third-key-0003'),
      'sk-third-key-0003',
    ],
  ];
  it.each(changes)('%s', async (_name, change, expected) => {
    saveKey(world.dataHome, 'w', 'sk-first-key-0001', 'https://api.example.test', NOW);
    await settle();
    expect(keyOf('w')).toBe('sk-first-key-0001');
    expect(keyOf('w')).toBe('sk-first-key-0001');
    change();
    expect(keyOf('w')).toBe(expected);
  });

  it('finds a file made readable by others at the next read, and makes it private again', async () => {
    saveKey(world.dataHome, 'w', 'sk-first-key-0001', 'https://api.example.test', NOW);
    await settle();
    expect(readCredentials(world.dataHome).repaired).toBeUndefined();
    const file = credentialsPath(world.dataHome);
    chmodSync(file, 0o644);
    expect(readCredentials(world.dataHome).repaired).toMatch(/readable by other users/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // Said once: the repaired file is read again, and holds nothing to repair.
    expect(readCredentials(world.dataHome).repaired).toBeUndefined();
  });

  it('gives each reader of a section its own copy', async () => {
    writeCredentialsSection(world.dataHome, 'copilot', { logins: { a: { githubToken: 'gho_1' } } });
    await settle();
    const section = readCredentialsSection(world.dataHome, 'copilot') as {
      logins: Record<string, { githubToken: string }>;
    };
    section.logins.a!.githubToken = 'changed by a caller';
    expect(readCredentialsSection(world.dataHome, 'copilot')).toEqual({
      logins: { a: { githubToken: 'gho_1' } },
    });
  });

  it('keeps failing on a damaged file, and reads it again once it is fixed', async () => {
    const file = credentialsPath(world.dataHome);
    saveKey(world.dataHome, 'w', 'sk-first-key-0001', 'https://api.example.test', NOW);
    writeFileSync(file, '{ "keys": ', { mode: 0o600 });
    await settle();
    expect(() => readCredentials(world.dataHome)).toThrow(/cannot be read|store the keys again/);
    expect(() => readCredentials(world.dataHome)).toThrow(/store the keys again/);
    rmSync(file);
    expect(readCredentials(world.dataHome).keys).toEqual({});
  });
});
