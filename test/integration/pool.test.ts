import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { build } from 'esbuild';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { scaledMs } from '../helpers/timing.ts';

const REPO_ROOT = join(import.meta.dirname, '..', '..');
const POOL_KEY = 'http://127.0.0.1:11434/v1';

let bundleDir: string;
let workerBundle: string;
beforeAll(async () => {
  // Node 20 cannot run TypeScript: the children run the real modules bundled.
  bundleDir = mkdtempSync(join(tmpdir(), 'delegate-pool-bundle-'));
  workerBundle = join(bundleDir, 'pool-worker.mjs');
  await build({
    entryPoints: [join(REPO_ROOT, 'test', 'helpers', 'pool-worker.ts')],
    outfile: workerBundle,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'warning',
  });
});
afterAll(() => rmSync(bundleDir, { recursive: true, force: true }));

let dir: string;
let slotsDir: string;
const children: ChildProcess[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'delegate-pool-'));
  slotsDir = join(dir, 'slots');
});
afterEach(async () => {
  const running = children
    .splice(0)
    .filter((child) => child.exitCode === null && !child.signalCode);
  await Promise.all(
    running.map((child) => {
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      return exited;
    }),
  );
  rmSync(dir, { recursive: true, force: true });
});

function startWorker(...args: string[]) {
  const child = spawn(process.execPath, [workerBundle, ...args], { stdio: 'pipe' });
  children.push(child);
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = once(child, 'exit') as Promise<[number | null, string | null]>;
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return {
    child,
    async nextLine(): Promise<string> {
      const next = await lines.next();
      if (next.done) throw new Error(`worker ended without output: ${stderr}`);
      return next.value;
    },
    async finished(): Promise<void> {
      const [code] = await exited;
      if (code !== 0) throw new Error(`worker ${args[0]} failed (${code}): ${stderr}`);
    },
  };
}

/** Starts the loops at once, once every one of them is ready, and waits for them to finish. */
async function startTogether(workers: Array<ReturnType<typeof startWorker>>): Promise<void> {
  for (const worker of workers) expect(await worker.nextLine()).toBe('ready');
  for (const worker of workers) worker.child.stdin?.end('go\n');
  await Promise.all(workers.map((worker) => worker.finished()));
}

describe('pool slots across processes', () => {
  it('never has more holders than slots: 4 processes x 10 turns on a pool of 3', async () => {
    const log = join(dir, 'holders.log');
    writeFileSync(log, '');
    const workers = Array.from({ length: 4 }, () =>
      startWorker('loop', slotsDir, POOL_KEY, '3', '10', '30', log),
    );
    await startTogether(workers);
    // O_APPEND lines land in the order they happened; each is written while holding the slot.
    const holderOfSlot = new Map<string, string>();
    let turns = 0;
    let maxHolders = 0;
    for (const line of readFileSync(log, 'utf8').trim().split('\n')) {
      const [event, pid = '', index = ''] = line.split(' ');
      if (event === 'enter') {
        expect(holderOfSlot.get(index)).toBeUndefined();
        holderOfSlot.set(index, pid);
        turns += 1;
      } else {
        expect(holderOfSlot.get(index)).toBe(pid);
        holderOfSlot.delete(index);
      }
      maxHolders = Math.max(maxHolders, holderOfSlot.size);
    }
    expect(turns).toBe(40);
    expect(maxHolders).toBeLessThanOrEqual(3);
    expect(maxHolders).toBeGreaterThanOrEqual(2);
  });

  it('with slots kept between calls: never more holders than slots, and waiters take turns with the keepers', async () => {
    const log = join(dir, 'holders.log');
    writeFileSync(log, '');
    // Kept for 10 s: only a waiter makes a keeper let its slot go.
    const workers = Array.from({ length: 3 }, () =>
      startWorker('loop', slotsDir, POOL_KEY, '2', '8', '20', log, '10000'),
    );
    await startTogether(workers);
    const holderOfSlot = new Map<string, string>();
    const enters: string[] = [];
    for (const line of readFileSync(log, 'utf8').trim().split('\n')) {
      const [event, pid = '', index = ''] = line.split(' ');
      if (event === 'enter') {
        // A slot is entered again only by the process that left it last (its kept slot) or
        // after it went; never while another holds it.
        expect(holderOfSlot.get(index)).toBeUndefined();
        holderOfSlot.set(index, pid);
        enters.push(pid);
      } else {
        expect(holderOfSlot.get(index)).toBe(pid);
        holderOfSlot.delete(index);
      }
    }
    expect(enters).toHaveLength(24);
    // Each process got in before every other one had done all its rounds: the third did not wait
    // for the first two to finish while they kept their slots.
    const pids = [...new Set(enters)];
    expect(pids).toHaveLength(3);
    for (const pid of pids)
      for (const other of pids)
        expect(enters.indexOf(pid), `${pid} first in before ${other}'s last`).toBeLessThan(
          enters.lastIndexOf(other),
        );
    // Every slot file went with its process's exit.
    expect(readdirSync(join(slotsDir, readdirSync(slotsDir)[0]!))).toEqual([]);
  });

  it('a slot kept after its release goes when its process exits', async () => {
    const keeper = startWorker('keep', slotsDir, POOL_KEY, '1');
    expect(await keeper.nextLine()).toBe('kept 0');
    await keeper.finished();
    const folder = join(slotsDir, readdirSync(slotsDir)[0]!);
    expect(readdirSync(folder)).toEqual([]);
  });

  it('frees the slot of a SIGKILLed holder at once', async () => {
    const holder = startWorker('hold', slotsDir, POOL_KEY, '1');
    expect(await holder.nextLine()).toBe('acquired 0');
    const waiter = startWorker('try', slotsDir, POOL_KEY, '1', String(scaledMs(10_000)));
    expect(await waiter.nextLine()).toBe('waiting');
    const killedAt = performance.now();
    holder.child.kill('SIGKILL');
    expect(await waiter.nextLine()).toBe('acquired 0');
    expect(performance.now() - killedAt).toBeLessThan(scaledMs(500));
  });

  it('never takes the slot of a suspended (SIGSTOPped) holder', async () => {
    const holder = startWorker('hold', slotsDir, POOL_KEY, '1');
    expect(await holder.nextLine()).toBe('acquired 0');
    holder.child.kill('SIGSTOP');
    const refused = startWorker('try', slotsDir, POOL_KEY, '1', '300');
    expect(await refused.nextLine()).toBe('waiting');
    expect(await refused.nextLine()).toBe('full');

    const waiter = startWorker('try', slotsDir, POOL_KEY, '1', String(scaledMs(10_000)));
    expect(await waiter.nextLine()).toBe('waiting');
    holder.child.kill('SIGCONT');
    holder.child.stdin?.write('release\n');
    expect(await holder.nextLine()).toBe('released');
    expect(await waiter.nextLine()).toBe('acquired 0');
  });
});

describe('withFileLock across processes', () => {
  it('loses no increment: 4 processes x 25 increments of one counter file', async () => {
    const counter = join(dir, 'counter');
    const lock = join(dir, 'locks', 'counter.lock');
    writeFileSync(counter, '0');
    const workers = Array.from({ length: 4 }, () => startWorker('count', lock, counter, '25'));
    await Promise.all(workers.map((worker) => worker.finished()));
    expect(readFileSync(counter, 'utf8')).toBe('100');
    expect(existsSync(lock)).toBe(false);
  });

  it('breaks a lock left by a process that has exited', async () => {
    const { pid } = spawnSync('true');
    const counter = join(dir, 'counter');
    const lock = join(dir, 'locks', 'counter.lock');
    writeFileSync(counter, '0');
    mkdirSync(join(dir, 'locks'));
    writeFileSync(lock, JSON.stringify({ pid, startTime: '' }));
    const started = performance.now();
    await startWorker('count', lock, counter, '1').finished();
    expect(readFileSync(counter, 'utf8')).toBe('1');
    expect(performance.now() - started).toBeLessThan(scaledMs(2_000));
  });
});
