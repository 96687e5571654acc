import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { build } from 'esbuild';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jobsDir } from '../../server/src/config/paths.ts';
import { appendEvent, openEventLog, readEvents } from '../../server/src/store/job-store.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';

let world: TempEnv;
const id = 't_abc123';
beforeEach(() => {
  world = createTempEnv();
  mkdirSync(join(jobsDir(world.dataHome), id), { recursive: true });
});
afterEach(() => world.cleanup());

const details = () => readEvents(world.dataHome, id, 100).map((event) => event.detail);
const eventsFile = () => join(jobsDir(world.dataHome), id, 'events.jsonl');

describe('openEventLog: a running task appends its events once per turn of the event loop', () => {
  it('writes the lines of a turn together once the turn is done, in order, beside other writers', async () => {
    const log = openEventLog(world.dataHome, id);
    log.append('step', 'one');
    log.append('model', 'two');
    // Nothing yet: the turn's work (the next model request) goes first.
    expect(details()).toEqual([]);
    await nextTurn();
    expect(details()).toEqual(['one', 'two']);
    appendEvent(world.dataHome, id, 'state', 'three');
    log.append('step', 'four');
    await nextTurn();
    log.close();
    expect(details()).toEqual(['one', 'two', 'three', 'four']);
    expect(readFileSync(eventsFile(), 'utf8').split('\n').filter(Boolean)).toHaveLength(4);
  });

  it('close writes what is left at once; a log used after close opens the file anew', async () => {
    const log = openEventLog(world.dataHome, id);
    log.append('step', 'one');
    log.close();
    expect(details()).toEqual(['one']);
    log.append('step', 'two');
    await nextTurn();
    expect(details()).toEqual(['one', 'two']);
    log.close();
    // The turn's scheduled write finds nothing left to write: no line twice.
    await nextTurn();
    expect(details()).toEqual(['one', 'two']);
  });

  it('drops the lines of a task whose folder is gone, without throwing', async () => {
    const log = openEventLog(world.dataHome, id);
    log.append('step', 'one');
    await nextTurn();
    // The folder goes while the log is open: its lines go to the removed file until it is closed.
    rmSync(join(jobsDir(world.dataHome), id), { recursive: true });
    log.append('step', 'lost folder');
    await nextTurn();
    log.close();
    expect(() => log.append('step', 'no folder')).not.toThrow();
    await nextTurn();
    expect(() => log.close()).not.toThrow();
    // Dropped: nothing made the task's folder or its events again.
    expect(existsSync(eventsFile())).toBe(false);
  });

  it('writes what is left when the process exits before the turn ends', async () => {
    // A worker that exits at once (process.exit on a stop) still leaves its last lines.
    const dir = join(world.root, 'exit-bundle');
    mkdirSync(dir);
    const script = join(dir, 'exit.ts');
    writeFileSync(
      script,
      [
        `import { openEventLog } from ${JSON.stringify(join(import.meta.dirname, '..', '..', 'server', 'src', 'store', 'job-store.ts'))};`,
        'const log = openEventLog(process.argv[2], process.argv[3]);',
        "log.append('step', 'before exit');",
        "log.append('state', 'exiting');",
        'process.exit(143);',
      ].join('\n'),
    );
    await build({
      entryPoints: [script],
      outfile: join(dir, 'exit.mjs'),
      bundle: true,
      platform: 'node',
      format: 'esm',
      logLevel: 'silent',
    });
    expect(() =>
      execFileSync(process.execPath, [join(dir, 'exit.mjs'), world.dataHome, id], {
        stdio: 'ignore',
      }),
    ).toThrow(/143|Command failed/);
    expect(details()).toEqual(['before exit', 'exiting']);
  });
});
