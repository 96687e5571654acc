// A running task looks at two files every turn: its job.json (did the task end? what has it
// spent?) and its mailbox (steering from the supervisor). Both looks reuse what they read while
// nothing changed; every change another process can make between two looks must show at the
// next one, however soon after the previous look it comes.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { postMessage, takeMessages } from '../../server/src/store/mailbox.ts';
import {
  jobDir,
  readJobUnlessChanged,
  updateJob,
  writeJob,
} from '../../server/src/store/job-store.ts';
import type { JobFile } from '../../server/src/store/job-file.ts';
import { FINE_SETTLE_MS, type KeptReads } from '../../server/src/util/file-fingerprint.ts';
import { jobOf } from '../helpers/task-jobs.ts';
import { createTaskRecorder } from '../../server/src/tasks/task-recorder.ts';

let dataHome: string;
beforeEach(() => {
  dataHome = mkdtempSync(join(tmpdir(), 'delegate-looks-'));
});
afterEach(() => rmSync(dataHome, { recursive: true, force: true }));

const ID = 't_look01';
/** Long enough for a change stamped now to have settled (file-fingerprint.ts). */
const settle = () => sleep(FINE_SETTLE_MS + 50);

/** The task's job.json, settled: as between two turns of a task its recorder wrote a while ago. */
async function settledJob(): Promise<void> {
  mkdirSync(jobDir(dataHome, ID), { recursive: true });
  await writeJob(dataHome, jobOf(dataHome, { id: ID, state: 'running' }));
  await settle();
}

describe('the per-turn job check sees every write of job.json at the next look', () => {
  const writes: Array<[name: string, write: () => Promise<unknown>, expected: Partial<JobFile>]> = [
    [
      'a cancel (updateJob from another process: read-modify-write under the lock)',
      () => updateJob(dataHome, ID, () => ({ state: 'cancelled' })),
      { state: 'cancelled' },
    ],
    [
      'the recorder writing its cost',
      () => updateJob(dataHome, ID, (job) => ({ costUsd: job.costUsd + 0.25 })),
      { costUsd: 0.25 },
    ],
    [
      'a whole job written anew (writeJob)',
      () => writeJob(dataHome, jobOf(dataHome, { id: ID, state: 'failed', error: 'x' })),
      { state: 'failed' },
    ],
  ];
  it.each(writes)('%s', async (_name, write, expected) => {
    await settledJob();
    const kept: KeptReads<JobFile> = new Map();
    const first = readJobUnlessChanged(kept, dataHome, ID);
    expect(first.state).toBe('running');
    // Unchanged and settled: the same read, not a new one.
    expect(readJobUnlessChanged(kept, dataHome, ID)).toBe(first);
    await write();
    // At once, within the clock tick of the look before: the change shows.
    expect(readJobUnlessChanged(kept, dataHome, ID)).toMatchObject(expected);
    // And on every look after, settled or not.
    expect(readJobUnlessChanged(kept, dataHome, ID)).toMatchObject(expected);
    await settle();
    expect(readJobUnlessChanged(kept, dataHome, ID)).toMatchObject(expected);
  });

  it('a job folder removed under the task is an error, not the last read', async () => {
    await settledJob();
    const kept: KeptReads<JobFile> = new Map();
    readJobUnlessChanged(kept, dataHome, ID);
    rmSync(jobDir(dataHome, ID), { recursive: true });
    expect(() => readJobUnlessChanged(kept, dataHome, ID)).toThrow(/No task t_look01/);
  });
});

describe("a task's own writes of job.json are known without a read; anyone else's show at once", () => {
  // Right after the task's recorder wrote job.json (not settled), another writer replaces it.
  const others: Array<[name: string, write: () => Promise<unknown>, expected: Partial<JobFile>]> = [
    [
      'a cancel from the server (updateJob under the lock)',
      () => updateJob(dataHome, ID, () => ({ state: 'cancelled' })),
      { state: 'cancelled', costUsd: 0.25 },
    ],
    [
      'another recorder of the same task (its own kept writes)',
      () => updateJob(dataHome, ID, () => ({ activity: 'elsewhere' }), new Map()),
      { activity: 'elsewhere', costUsd: 0.25 },
    ],
    [
      'a whole job written anew, without the lock (writeJob)',
      () => writeJob(dataHome, jobOf(dataHome, { id: ID, state: 'failed', error: 'x' })),
      { state: 'failed', costUsd: 0 },
    ],
  ];
  it.each(others)('%s', async (_name, write, expected) => {
    await settledJob();
    const recorder = createTaskRecorder(dataHome, ID);
    const before = recorder.job();
    await recorder.update((job) => ({ costUsd: job.costUsd + 0.25 }));
    // The recorder's own write: what it wrote, the same object at every look, not read again
    // although the file changed within FINE_SETTLE_MS.
    const own = recorder.job();
    expect(own).not.toBe(before);
    expect(own).toMatchObject({ state: 'running', costUsd: 0.25 });
    expect(recorder.job()).toBe(own);
    expect(readJobUnlessChanged(new Map(), dataHome, ID)).toEqual(own);
    // Another's write while the recorder's is still unsettled: seen at the next look, and after.
    await write();
    expect(recorder.job()).toMatchObject(expected);
    expect(recorder.job()).toMatchObject(expected);
    await settle();
    expect(recorder.job()).toMatchObject(expected);
    recorder.close();
  });
});

describe('the per-turn mailbox look takes every message posted between looks', () => {
  const mailbox = () => join(jobDir(dataHome, ID), 'mailbox');
  const cases: Array<[name: string, before: () => Promise<void>]> = [
    ['the mailbox folder never made (no message yet)', () => Promise.resolve()],
    [
      'an empty mailbox, settled (a look found nothing long ago)',
      async () => {
        mkdirSync(mailbox());
        await settle();
      },
    ],
    [
      'a mailbox emptied by the look just before (not settled yet)',
      async () => {
        await postMessage(jobDir(dataHome, ID), 'steer', 'first');
        expect(takeMessages(jobDir(dataHome, ID), 'steer').map((m) => m.text)).toEqual(['first']);
      },
    ],
    [
      'a mailbox emptied by a look that has settled since',
      async () => {
        await postMessage(jobDir(dataHome, ID), 'steer', 'first');
        expect(takeMessages(jobDir(dataHome, ID), 'steer')).toHaveLength(1);
        await settle();
      },
    ],
  ];
  it.each(cases)('%s', async (_name, before) => {
    mkdirSync(jobDir(dataHome, ID), { recursive: true });
    await before();
    // The look that finds nothing, then a message posted right after it.
    expect(takeMessages(jobDir(dataHome, ID), 'steer')).toEqual([]);
    expect(takeMessages(jobDir(dataHome, ID), 'steer')).toEqual([]);
    await postMessage(jobDir(dataHome, ID), 'steer', 'turn left');
    await postMessage(jobDir(dataHome, ID), 'answer', 'yes');
    expect(takeMessages(jobDir(dataHome, ID), 'steer').map((m) => m.text)).toEqual(['turn left']);
    // Taken once: never again; the other kind stays for its own look.
    expect(takeMessages(jobDir(dataHome, ID), 'steer')).toEqual([]);
    await settle();
    expect(takeMessages(jobDir(dataHome, ID), 'steer')).toEqual([]);
    expect(takeMessages(jobDir(dataHome, ID), 'answer').map((m) => m.text)).toEqual(['yes']);
    expect(takeMessages(jobDir(dataHome, ID))).toEqual([]);
  });
});
