import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withFileLock } from '../../server/src/util/file-lock.ts';
import { currentProcessIdentity } from '../../server/src/util/process-identity.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';
import { scaledMs } from '../helpers/timing.ts';

const IMPOSSIBLE_PID = 4_194_305;

let world: TempEnv;
let lockPath: string;
beforeEach(() => {
  world = createTempEnv();
  lockPath = join(world.dataHome, 'locks', 'a.lock');
});
afterEach(() => world.cleanup());

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const writeLock = (content: string) => {
  mkdirSync(join(world.dataHome, 'locks'), { recursive: true });
  writeFileSync(lockPath, content);
};

describe('withFileLock', () => {
  it('runs one action at a time, writes the holder and removes the lock afterwards', async () => {
    let running = 0;
    let maxRunning = 0;
    const action = async () => {
      running += 1;
      maxRunning = Math.max(maxRunning, running);
      expect(JSON.parse(readFileSync(lockPath, 'utf8'))).toEqual(currentProcessIdentity());
      await sleep(5);
      running -= 1;
    };
    await Promise.all(Array.from({ length: 8 }, () => withFileLock(lockPath, action)));
    expect(maxRunning).toBe(1);
    expect(existsSync(lockPath)).toBe(false);
  });

  it('returns the result, and releases the lock when the action throws', async () => {
    await expect(withFileLock(lockPath, () => Promise.resolve(42))).resolves.toBe(42);
    await expect(withFileLock(lockPath, () => Promise.reject(new Error('boom')))).rejects.toThrow(
      'boom',
    );
    expect(existsSync(lockPath)).toBe(false);
  });

  it('breaks at once a lock whose holder is dead or whose pid was reused', async () => {
    for (const holder of [
      { pid: IMPOSSIBLE_PID, startTime: '' },
      { pid: process.pid, startTime: `${currentProcessIdentity().startTime}0` },
    ]) {
      writeLock(JSON.stringify(holder));
      const started = Date.now();
      await expect(withFileLock(lockPath, () => Promise.resolve('ran'))).resolves.toBe('ran');
      expect(Date.now() - started).toBeLessThan(scaledMs(500));
    }
  });

  it('breaks an empty lock file after ~2 s (its writer died before writing), not before', async () => {
    writeLock('');
    await expect(
      withFileLock(lockPath, () => Promise.resolve(), { timeoutMs: 200 }),
    ).rejects.toThrow(`Timed out after 200 ms waiting for the lock ${lockPath}`);
    const threeSecondsAgo = new Date(Date.now() - 3_000);
    utimesSync(lockPath, threeSecondsAgo, threeSecondsAgo);
    await expect(withFileLock(lockPath, () => Promise.resolve('ran'))).resolves.toBe('ran');
  });

  it('waits for a live holder and names it when the timeout passes', async () => {
    writeLock(JSON.stringify(currentProcessIdentity()));
    const started = Date.now();
    await expect(
      withFileLock(lockPath, () => Promise.resolve(), { timeoutMs: 300 }),
    ).rejects.toThrow(new RegExp(`${escapeRegExp(lockPath)}, held by pid ${process.pid}$`));
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(existsSync(lockPath)).toBe(true);
  });

  it('leaves a lock file that is no longer its own, rewritten or replaced', async () => {
    const foreign = JSON.stringify({ pid: process.pid, startTime: 'someone else' });
    for (const takeOver of [
      () => writeFileSync(lockPath, foreign),
      () => {
        rmSync(lockPath);
        writeFileSync(lockPath, foreign);
      },
    ]) {
      await withFileLock(lockPath, () => Promise.resolve(takeOver()));
      expect(readFileSync(lockPath, 'utf8')).toBe(foreign);
      expect(readdirSync(dirname(lockPath))).toEqual(['a.lock']);
      rmSync(lockPath);
    }
  });
});
