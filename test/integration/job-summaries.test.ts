import { readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readJobSummaries } from '../../server/src/store/job-file.ts';
import { updateJob } from '../../server/src/store/job-store.ts';
import { writeTask } from '../helpers/task-jobs.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';

let world: TempEnv;
beforeEach(() => {
  world = createTempEnv();
});
afterEach(() => world.cleanup());

const recent = () =>
  readJobSummaries(world.dataHome, { writtenSinceMs: Date.now() - 60_000 })
    .map((job) => `${job.id}:${job.state}`)
    .sort();
const jobFile = (id: string) => join(world.dataHome, 'jobs', id, 'job.json');

/** A whole second a few seconds ago: a file time that survives being set again exactly. */
const WHOLE_SECOND = Math.floor(Date.now() / 1000) - 5;
const setTime = (id: string) => utimesSync(jobFile(id), WHOLE_SECOND, WHOLE_SECOND);

/**
 * Rewrites a job file in place (same inode) with same-length text and the time `setTime` gave
 * it: a change no job write makes (they replace the file), so only a read shows it.
 */
function changeBehindTheStamp(id: string, from: string, to: string): void {
  const path = jobFile(id);
  const before = statSync(path);
  expect(before.mtimeMs).toBe(WHOLE_SECOND * 1000);
  expect(to).toHaveLength(from.length);
  writeFileSync(path, readFileSync(path, 'utf8').replace(from, to));
  setTime(id);
  const after = statSync(path);
  expect([after.ino, after.size, after.mtimeMs]).toEqual([before.ino, before.size, before.mtimeMs]);
}

// The status lines are rendered from every recent job after every job write; a listing of the
// recent jobs re-reads only the job files written since the last one.
describe('recent job summaries', () => {
  it('reads again only what was written since the last listing', async () => {
    await writeTask(world.dataHome, world.project, { id: 't_aaaaaa', state: 'running' });
    await writeTask(world.dataHome, world.project, { id: 't_bbbbbb', state: 'running' });
    setTime('t_aaaaaa');
    expect(recent()).toEqual(['t_aaaaaa:running', 't_bbbbbb:running']);

    // A file whose inode, size and time are unchanged is not read again...
    changeBehindTheStamp('t_aaaaaa', '"running"', '"queued" ');
    // ...and a job written since is, whatever its size.
    await updateJob(world.dataHome, 't_bbbbbb', () => ({ state: 'done' }));
    expect(recent()).toEqual(['t_aaaaaa:running', 't_bbbbbb:done']);

    // Written again (a new file), it is read again.
    await updateJob(world.dataHome, 't_aaaaaa', () => ({ state: 'needs_input' }));
    expect(recent()).toEqual(['t_aaaaaa:needs_input', 't_bbbbbb:done']);
  });

  it('skips what is no job, forgets a job that left the listing, and reads everything without the filter', async () => {
    await writeTask(world.dataHome, world.project, { id: 't_cccccc', state: 'running' });
    // A stray file among the job folders is no job (its "job.json" is not a path: ENOTDIR).
    writeFileSync(join(world.dataHome, 'jobs', 'notes.txt'), 'not a job\n');
    expect(recent()).toEqual(['t_cccccc:running']);
    rmSync(join(world.dataHome, 'jobs', 't_cccccc'), { recursive: true });
    expect(recent()).toEqual([]);

    await writeTask(world.dataHome, world.project, { id: 't_dddddd', state: 'running' });
    setTime('t_dddddd');
    expect(recent()).toEqual(['t_dddddd:running']);
    changeBehindTheStamp('t_dddddd', '"running"', '"queued" ');
    // The unfiltered listing (hooks, `delegate watch`) always reads the files.
    expect(readJobSummaries(world.dataHome).map((job) => job.state)).toEqual(['queued']);
  });
});
