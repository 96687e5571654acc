// A child process for the cross-process pool and lock tests; bundled with esbuild by the test
// (Node 20 cannot run TypeScript). Commands:
//   loop <slotsDir> <poolKey> <size> <count> <holdMs> <logPath>  take and release a slot
//        <count> times, appending "enter"/"leave" lines while holding it
//   hold <slotsDir> <poolKey> <size>                             take a slot, print "acquired
//        <index>", release it when stdin says "release", then print "released" and exit
//   try <slotsDir> <poolKey> <size> <waitMs>                     one try, "waiting" if full, then
//        wait up to <waitMs>: "acquired <index>" or "full"
//   count <lockPath> <counterPath> <count>                       increment a counter file under
//        withFileLock <count> times
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { withFileLock } from '../../server/src/util/file-lock.ts';
import { acquireSlot } from '../../server/src/calls/pool.ts';
import { scaledMs } from './timing.ts';

const [command = '', ...args] = process.argv.slice(2);
const say = (line: string) => process.stdout.write(`${line}\n`);

async function loop([slotsDir = '', poolKey = '', size, count, holdMs, logPath = '']: string[]) {
  for (let round = 0; round < Number(count); round += 1) {
    const slot = await acquireSlot(slotsDir, poolKey, Number(size), {
      waitMs: scaledMs(20_000),
    });
    if (!slot) throw new Error(`no slot within ${scaledMs(20_000)} ms`);
    appendFileSync(logPath, `enter ${process.pid} ${slot.index} ${Date.now()}\n`);
    await sleep(Number(holdMs));
    appendFileSync(logPath, `leave ${process.pid} ${slot.index} ${Date.now()}\n`);
    await slot.release();
  }
}

async function hold([slotsDir = '', poolKey = '', size]: string[]) {
  const slot = await acquireSlot(slotsDir, poolKey, Number(size), { waitMs: scaledMs(10_000) });
  if (!slot) throw new Error(`no slot within ${scaledMs(10_000)} ms`);
  say(`acquired ${slot.index}`);
  for await (const line of createInterface({ input: process.stdin })) {
    if (line.trim() !== 'release') continue;
    await slot.release();
    say('released');
    return;
  }
}

async function tryOnce([slotsDir = '', poolKey = '', size, waitMs]: string[]) {
  let slot = await acquireSlot(slotsDir, poolKey, Number(size));
  if (!slot) {
    say('waiting');
    slot = await acquireSlot(slotsDir, poolKey, Number(size), { waitMs: Number(waitMs) });
  }
  say(slot ? `acquired ${slot.index}` : 'full');
  await slot?.release();
}

async function count([lockPath = '', counterPath = '', times]: string[]) {
  for (let round = 0; round < Number(times); round += 1) {
    await withFileLock(lockPath, async () => {
      const value = Number(readFileSync(counterPath, 'utf8'));
      // Yield between read and write so that a broken lock would lose increments.
      await sleep(1);
      writeFileSync(counterPath, String(value + 1));
    });
  }
}

const commands: Record<string, (args: string[]) => Promise<void>> = {
  loop,
  hold,
  try: tryOnce,
  count,
};
const run = commands[command];
if (!run) throw new Error(`unknown command ${command}`);
await run(args);
