// A child process for the cross-process pool and lock tests; bundled with esbuild by the test
// (Node 20 cannot run TypeScript). Commands:
//   loop <slotsDir> <poolKey> <size> <count> <holdMs> <logPath> [keepMs]  take and release a
//        slot <count> times, appending "enter"/"leave" lines while holding it; it says "ready"
//        first and starts on a "go" line on stdin
//   keep <slotsDir> <poolKey> <size>                             take a slot with keepMs 60 s,
//        release it (kept), print "kept <index>" and exit
//   hold <slotsDir> <poolKey> <size>                             take a slot, print "acquired
//        <index>", release it when stdin says "release", then print "released" and exit
//   try <slotsDir> <poolKey> <size> <waitMs>                     one try, "waiting" if full, then
//        wait up to <waitMs>: "acquired <index>" or "full"
//   count <lockPath> <counterPath> <count>                       increment a counter file under
//        withFileLock <count> times
import { appendFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { withFileLock } from '../../server/src/util/file-lock.ts';
import { acquireSlot } from '../../server/src/calls/pool.ts';
import { scaledMs } from './timing.ts';

const [command = '', ...args] = process.argv.slice(2);
const say = (line: string) => process.stdout.write(`${line}\n`);

async function loop([
  slotsDir = '',
  poolKey = '',
  size,
  count,
  holdMs,
  logPath = '',
  keepMs = '0',
]: string[]) {
  // All loops start together: each says it is ready and waits for "go" on stdin.
  say('ready');
  for await (const line of createInterface({ input: process.stdin }))
    if (line.trim() === 'go') break;
  for (let round = 0; round < Number(count); round += 1) {
    const slot = await acquireSlot(slotsDir, poolKey, Number(size), {
      waitMs: scaledMs(20_000),
      keepMs: Number(keepMs),
      label: `loop ${process.pid}`,
    });
    if (!slot) throw new Error(`no slot within ${scaledMs(20_000)} ms`);
    // The slot's file names this process while it holds the slot, kept or taken anew.
    const file = JSON.parse(
      readFileSync(join(slotsDir, readdirSync(slotsDir)[0] ?? '', `${slot.index}.json`), 'utf8'),
    ) as { pid: number };
    if (file.pid !== process.pid) throw new Error(`slot ${slot.index} is held by ${file.pid}`);
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

/** Takes a slot kept for a minute after its release, releases it and exits: the exit lets it go. */
async function keep([slotsDir = '', poolKey = '', size]: string[]) {
  const slot = await acquireSlot(slotsDir, poolKey, Number(size), { keepMs: 60_000 });
  if (!slot) throw new Error('no slot');
  await slot.release();
  say(`kept ${slot.index}`);
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
  keep,
  try: tryOnce,
  count,
};
const run = commands[command];
if (!run) throw new Error(`unknown command ${command}`);
await run(args);
