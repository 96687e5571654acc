import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
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

describe('openEventLog: a running task appends its events through one descriptor', () => {
  it('keeps every line whole and in order beside other writers, and after close', () => {
    const log = openEventLog(world.dataHome, id);
    log.append('step', 'one');
    appendEvent(world.dataHome, id, 'state', 'two');
    log.append('step', 'three');
    log.close();
    log.append('step', 'four');
    log.close();
    expect(details()).toEqual(['one', 'two', 'three', 'four']);
    const lines = readFileSync(join(jobsDir(world.dataHome), id, 'events.jsonl'), 'utf8');
    expect(lines.split('\n').filter(Boolean)).toHaveLength(4);
  });

  it('once closed, opens the file anew: a task folder removed meanwhile fails as appendEvent does', () => {
    const log = openEventLog(world.dataHome, id);
    log.append('step', 'one');
    // The folder goes while the log is open: its lines go to the removed file until it is closed.
    rmSync(join(jobsDir(world.dataHome), id), { recursive: true });
    expect(() => log.append('step', 'lost folder')).not.toThrow();
    log.close();
    expect(() => log.append('step', 'no folder')).toThrow(/ENOENT/);
  });
});
