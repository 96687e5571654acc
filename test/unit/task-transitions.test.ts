import { describe, expect, it } from 'vitest';
import {
  ANNOUNCE_WINDOW_MS,
  announcementKey,
  decideAnnouncements,
  transitionLine,
  type WatchedJob,
} from '../../server/src/cli/task-transitions.ts';

const NOW = Date.parse('2026-11-30T12:00:00Z');
const recent = new Date(NOW - 60_000).toISOString();
const job = (fields: Partial<WatchedJob> & { id: string }): WatchedJob => ({
  project: '/p',
  state: 'running',
  updatedAt: recent,
  ...fields,
});

describe('monitor announcements', () => {
  it('says nothing of a native task: Claude Code shows its question and reports its end itself', () => {
    const jobs = [
      job({ id: 't_n', state: 'needs_input', question: 'Q?', nativeTask: true }),
      job({ id: 't_m', state: 'done', endedAt: recent, nativeTask: true }),
    ];
    expect(decideAnnouncements(jobs, {}, NOW).lines).toEqual([]);
  });

  it('announces a question and an end once, and forgets a question once the task runs again', () => {
    const asking = job({ id: 't_a', state: 'needs_input', question: 'Q?' });
    const first = decideAnnouncements([asking], {}, NOW);
    expect(first.lines).toEqual([
      '[delegate] task t_a needs an answer: "Q?" → reply with task_answer t_a',
    ]);
    expect(decideAnnouncements([asking], first.record, NOW).lines).toEqual([]);
    const resumed = decideAnnouncements([job({ id: 't_a' })], first.record, NOW);
    expect(resumed).toEqual({ lines: [], record: {} });
    expect(decideAnnouncements([asking], resumed.record, NOW).lines).toHaveLength(1);
  });

  it('a new question is news even without a running state seen in between', () => {
    const first = decideAnnouncements(
      [job({ id: 't_a', state: 'needs_input', question: 'One?' })],
      {},
      NOW,
    );
    const second = decideAnnouncements(
      [job({ id: 't_a', state: 'needs_input', question: 'Two?' })],
      first.record,
      NOW,
    );
    expect(second.lines).toEqual([
      '[delegate] task t_a needs an answer: "Two?" → reply with task_answer t_a',
    ]);
  });

  it('records without a line: cancelled, reviewed, and transitions older than the window', () => {
    const old = new Date(NOW - ANNOUNCE_WINDOW_MS - 1_000).toISOString();
    const result = decideAnnouncements(
      [
        job({ id: 't_c', state: 'cancelled', endedAt: recent }),
        job({ id: 't_r', state: 'done', endedAt: recent, reviewedAt: recent }),
        job({ id: 't_o', state: 'failed', endedAt: old }),
      ],
      {},
      NOW,
    );
    expect(result).toEqual({
      lines: [],
      record: { t_c: 'cancelled', t_r: 'done', t_o: 'failed' },
    });
  });

  it('drops tasks that are gone from the record', () => {
    expect(decideAnnouncements([], { t_gone: 'done' }, NOW).record).toEqual({});
  });

  it('says what happened and the call to make next', () => {
    expect(
      transitionLine(
        job({
          id: 't_d',
          state: 'done',
          verdict: 'passed',
          costUsd: 0.5,
          filesTouched: ['a'],
          sandboxed: false,
        }),
      ),
    ).toBe(
      '[delegate] task t_d done: verdict passed, 1 file changed, $0.50, ran unsandboxed → review with task_result t_d',
    );
    expect(transitionLine(job({ id: 't_d', state: 'done', verdict: 'failed' }), 3)).toBe(
      '[delegate] task t_d done: verdict failed, 3 files changed → review with task_result t_d',
    );
    expect(transitionLine(job({ id: 't_l', state: 'lost', error: 'worker\ndied' }))).toBe(
      '[delegate] task t_l lost: worker\\ndied → task_result t_l',
    );
    expect(transitionLine(job({ id: 't_t', state: 'timeout' }))).toBe(
      '[delegate] task t_t timeout → task_result t_t',
    );
    expect(announcementKey(job({ id: 't_q', state: 'queued' }))).toBeUndefined();
  });
});
