import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquireSlot, poolHolders } from '../../server/src/calls/pool.ts';
import { currentProcessIdentity } from '../../server/src/util/process-identity.ts';
import { FINE_SETTLE_MS } from '../../server/src/util/file-fingerprint.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';
import { scaledMs } from '../helpers/timing.ts';
import { waitFor } from '../helpers/wait.ts';

const IMPOSSIBLE_PID = 4_194_305;

let world: TempEnv;
let slotsDir: string;
beforeEach(() => {
  world = createTempEnv();
  slotsDir = join(world.dataHome, 'slots');
});
afterEach(() => world.cleanup());

const take = (poolKey: string, size: number, options = {}) =>
  acquireSlot(slotsDir, poolKey, size, options);

describe('acquireSlot', () => {
  it('hands out at most `size` slots, and a released slot again', async () => {
    const first = await take('k', 2, { label: 'job-1' });
    const second = await take('k', 2);
    expect([first?.index, second?.index]).toEqual([0, 1]);
    expect(await take('k', 2)).toBeUndefined();
    await first?.release();
    expect((await take('k', 2))?.index).toBe(0);
  });

  it('records the holder, and release() is idempotent and removes only its own file', async () => {
    const slot = await take('k', 1, { label: 'job-1' });
    const path = join(slotsDir, 'k', '0.json');
    const holder = JSON.parse(readFileSync(path, 'utf8'));
    expect(holder).toMatchObject({ poolKey: 'k', ...currentProcessIdentity(), label: 'job-1' });
    expect(Date.parse(holder.since)).toBeGreaterThan(Date.now() - 5_000);
    await slot?.release();
    const next = await take('k', 1);
    await slot?.release();
    expect(existsSync(path)).toBe(true);
    await next?.release();
    expect(existsSync(path)).toBe(false);
  });

  it('takes at once a slot whose holder is dead', async () => {
    mkdirSync(join(slotsDir, 'k'), { recursive: true });
    const dead = { poolKey: 'k', pid: IMPOSSIBLE_PID, startTime: '', since: '' };
    writeFileSync(join(slotsDir, 'k', '0.json'), JSON.stringify(dead));
    expect((await take('k', 1))?.index).toBe(0);
  });

  it('waits for a slot to be released', async () => {
    const slot = await take('k', 1);
    setTimeout(() => void slot?.release(), 150);
    const started = Date.now();
    expect((await take('k', 1, { waitMs: scaledMs(5_000) }))?.index).toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('stops waiting when the signal aborts, with its reason', async () => {
    await take('k', 1);
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('cancelled by test')), 100);
    await expect(
      take('k', 1, { waitMs: scaledMs(5_000), signal: controller.signal }),
    ).rejects.toThrow('cancelled by test');
  });

  it('rejects sizes that are not positive integers, and an empty key', async () => {
    await expect(take('k', 0)).rejects.toThrow(RangeError);
    await expect(take('k', 1.5)).rejects.toThrow(RangeError);
    await expect(take('', 1)).rejects.toThrow('empty');
  });

  it('keeps every pool key in one safe, readable folder of its own', async () => {
    const keys = ['http://127.0.0.1:11434/v1', 'a/b', '..', '.', '~', `x${'y/'.repeat(300)}`];
    for (const key of keys) await take(key, 1);
    const folders = readdirSync(slotsDir);
    expect(folders).toHaveLength(keys.length);
    expect(folders).toContain('http%3A%2F%2F127.0.0.1%3A11434%2Fv1');
    for (const folder of folders) {
      expect(folder).not.toMatch(/^\.|\//);
      expect(Buffer.byteLength(folder)).toBeLessThanOrEqual(255);
    }
    expect(poolHolders(slotsDir).map((holder) => holder.poolKey)).toEqual(
      expect.arrayContaining(keys),
    );
  });
});

describe('a slot kept for the next call (keepMs)', () => {
  const fileOf = (index: number) => join(slotsDir, 'k', `${index}.json`);
  const version = (index: number) => {
    const stats = statSync(fileOf(index), { bigint: true });
    return `${stats.ino}:${stats.mtimeNs}`;
  };

  it('is still held after release, taken again by the same label without a new file, and let go after keepMs', async () => {
    const first = await take('k', 1, { label: 'task-a', keepMs: 300 });
    const before = version(0);
    await first?.release();
    expect(version(0)).toBe(before);
    // Held: another label (another task) finds the pool full.
    expect(await take('k', 1, { label: 'task-b' })).toBeUndefined();
    const again = await take('k', 1, { label: 'task-a', keepMs: 300 });
    expect(again?.index).toBe(0);
    expect(version(0)).toBe(before);
    await again?.release();
    await waitFor(() => !existsSync(fileOf(0)), 2_000);
    expect((await take('k', 1, { label: 'task-b' }))?.index).toBe(0);
  });

  it('without keepMs, release lets it go at once', async () => {
    const slot = await take('k', 1, { label: 'task-a' });
    await slot?.release();
    expect(existsSync(fileOf(0))).toBe(false);
  });

  it('goes to a call that waits for the pool: the keeper steps back and gets it next', async () => {
    const order: string[] = [];
    const first = await take('k', 1, { label: 'task-a', keepMs: scaledMs(10_000) });
    await first?.release();
    const waiter = take('k', 1, { label: 'task-b', waitMs: scaledMs(5_000) }).then(async (slot) => {
      order.push(`task-b ${slot?.index}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
      await slot?.release();
    });
    await waitFor(() => readdirSync(join(slotsDir, 'k')).some((name) => name.startsWith('wait-')));
    const keeper = await take('k', 1, {
      label: 'task-a',
      keepMs: scaledMs(10_000),
      waitMs: scaledMs(5_000),
    });
    order.push(`task-a ${keeper?.index}`);
    await waiter;
    expect(order).toEqual(['task-b 0', 'task-a 0']);
    await keeper?.release();
    // No wait file is left behind.
    expect(readdirSync(join(slotsDir, 'k')).filter((name) => name.startsWith('wait-'))).toEqual([]);
  });

  it('is not taken again when it no longer fits the pool, or its file is not the one it held', async () => {
    await take('k', 2, { label: 'other' });
    const high = await take('k', 2, { label: 'task-a', keepMs: scaledMs(10_000) });
    expect(high?.index).toBe(1);
    await high?.release();
    // The pool shrank to 1: slot 1 goes, and slot 0 is held.
    expect(await take('k', 1, { label: 'task-a', keepMs: scaledMs(10_000) })).toBeUndefined();
    expect(existsSync(fileOf(1))).toBe(false);
    const mine = await take('k', 2, { label: 'task-a', keepMs: scaledMs(10_000) });
    await mine?.release();
    // Someone removed and re-made the file (a clean-up, another holder): not this call's any more.
    rmSync(fileOf(1));
    writeFileSync(fileOf(1), JSON.stringify({ poolKey: 'k', ...currentProcessIdentity() }));
    expect(await take('k', 2, { label: 'task-a', keepMs: scaledMs(10_000) })).toBeUndefined();
  });
});

describe('a kept slot found by one look at its folder', () => {
  // Once the folder's times settled, a slot known to be this call's is vouched for by the
  // folder's fingerprint: the next call takes it without looking at its file while that holds.
  const settle = () => new Promise((resolve) => setTimeout(resolve, FINE_SETTLE_MS + 50));
  const file = () => join(slotsDir, 'f', '0.json');
  const replaceSlotFile = () => {
    // Someone else's now (a clean-up that took it for dead, then another holder).
    rmSync(file());
    writeFileSync(file(), JSON.stringify({ poolKey: 'f', ...currentProcessIdentity() }));
  };
  const cases = [
    { change: 'nothing', when: 'kept', isTaken: true },
    { change: 'the slot file', when: 'kept', isTaken: false },
    { change: 'the slot file', when: 'kept, then the folder settled', isTaken: false },
    { change: 'another file of the folder', when: 'kept', isTaken: true },
    { change: 'the slot file', when: 'held', isTaken: false },
    { change: 'the slot file', when: 'held, then the folder settled', isTaken: false },
  ];
  it.each(cases)('$change replaced while $when: taken again is $isTaken', async (each) => {
    const options = { label: 'task-a', keepMs: scaledMs(10_000) };
    await (await take('f', 1, options))?.release();
    await settle();
    // A call of the steady state: the slot kept, its file vouched for by the settled folder.
    const held = await take('f', 1, options);
    expect(held?.index).toBe(0);
    if (each.when.startsWith('held')) replaceSlotFile();
    if (each.when === 'held, then the folder settled') await settle();
    await held?.release();
    if (each.when.startsWith('kept') && each.change === 'the slot file') replaceSlotFile();
    if (each.change === 'another file of the folder') {
      writeFileSync(join(slotsDir, 'f', 'note.txt'), 'x');
    }
    if (each.when === 'kept, then the folder settled') await settle();
    const again = await take('f', 1, options);
    expect(again?.index === 0).toBe(each.isTaken);
    await again?.release();
  });
});

describe('poolHolders', () => {
  it('lists live holders and removes the files of dead ones', async () => {
    await take('a', 2, { label: 'one' });
    await take('b', 1);
    writeFileSync(
      join(slotsDir, 'a', '1.json'),
      JSON.stringify({ poolKey: 'a', pid: IMPOSSIBLE_PID, startTime: '', since: '' }),
    );
    const holders = poolHolders(slotsDir);
    expect(
      holders.map(({ poolKey, index, pid, label }) => ({ poolKey, index, pid, label })),
    ).toEqual([
      { poolKey: 'a', index: 0, pid: process.pid, label: 'one' },
      { poolKey: 'b', index: 0, pid: process.pid, label: undefined },
    ]);
    expect(existsSync(join(slotsDir, 'a', '1.json'))).toBe(false);
    expect(readdirSync(join(slotsDir, 'a'))).toEqual(['0.json']);
  });

  it('is empty when no slot was ever taken', () => {
    expect(poolHolders(join(world.root, 'missing'))).toEqual([]);
  });
});
