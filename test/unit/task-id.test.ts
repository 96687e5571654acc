import { existsSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { markStarted, reserveTaskId, scanJobs } from '../../server/src/store/job-store.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';

const IMPOSSIBLE_PID = 4_194_305;

let world: TempEnv;
beforeEach(() => {
  world = createTempEnv();
});
afterEach(() => world.cleanup());

/** Draws the given ids in turn (the last one forever). */
function drawing(...ids: string[]): () => string {
  let next = 0;
  return () => ids[Math.min(next++, ids.length - 1)]!;
}

describe('reserveTaskId', () => {
  it('never hands out an id whose job folder exists: a taken id is drawn again', () => {
    expect(reserveTaskId(world.dataHome, drawing('t_aaaaaa'))).toBe('t_aaaaaa');
    expect(reserveTaskId(world.dataHome, drawing('t_aaaaaa', 't_aaaaaa', 't_bbbbbb'))).toBe(
      't_bbbbbb',
    );
    expect(readdirSync(join(world.dataHome, 'jobs')).sort()).toEqual(['t_aaaaaa', 't_bbbbbb']);
  });

  it('gives up with an error, not a shared id, when every draw is taken', () => {
    reserveTaskId(world.dataHome, drawing('t_aaaaaa'));
    expect(() => reserveTaskId(world.dataHome, drawing('t_aaaaaa'))).toThrow(/EEXIST/);
  });

  it('300 reservations from a tiny id space: all distinct', () => {
    const letters = 'abcdefghijklmnopqrstuvwxyz';
    const draw = () =>
      `t_${letters[Math.floor(Math.random() * 26)]}${letters[Math.floor(Math.random() * 26)]}`;
    const ids = Array.from({ length: 300 }, () => reserveTaskId(world.dataHome, draw));
    expect(new Set(ids).size).toBe(300);
  });

  it('a reserved folder is a task being made while its process lives, however old', () => {
    const id = reserveTaskId(world.dataHome);
    const folder = join(world.dataHome, 'jobs', id);
    const old = new Date(Date.now() - 600_000);
    utimesSync(folder, old, old);
    expect(scanJobs(world.dataHome)).toEqual({ jobs: [], damaged: [] });
    // Its process died before it wrote job.json: the folder is reported, not hidden.
    writeFileSync(
      join(folder, 'starting'),
      JSON.stringify({ pid: IMPOSSIBLE_PID, startTime: '1' }),
    );
    utimesSync(folder, old, old);
    expect(scanJobs(world.dataHome).damaged.map((damage) => damage.id)).toEqual([id]);
    markStarted(world.dataHome, id);
    expect(existsSync(join(folder, 'starting'))).toBe(false);
  });
});
