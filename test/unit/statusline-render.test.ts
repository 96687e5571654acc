import { describe, expect, it } from 'vitest';
import {
  FINISHED_FADE_S,
  STATUS_WINDOW_S,
  renderStatusSegments,
  type StatusJob,
} from '../../server/src/store/render-status.ts';
import { formatStatusLines, freshStatusText } from '../../server/src/store/status-lines-file.ts';
import { posixCksum, projectStatusKey } from '../../server/src/store/status-key.ts';

const NOW = Date.parse('2026-11-30T12:00:00Z');
const NOW_S = NOW / 1000;
const job = (fields: Partial<StatusJob> & { id: string }): StatusJob => ({
  project: '/p',
  state: 'running',
  ...fields,
});

describe('status file key (POSIX cksum)', () => {
  it('matches cksum on known inputs, the length bytes included', () => {
    expect(posixCksum(Buffer.from(''))).toEqual({ crc: 4294967295, length: 0 });
    expect(posixCksum(Buffer.from('hello\n'))).toEqual({ crc: 3015617425, length: 6 });
    expect(posixCksum(Buffer.from('a'.repeat(300)))).toEqual({ crc: 1664553091, length: 300 });
  });

  it('keys a project by its UTF-8 path and a newline', () => {
    expect(projectStatusKey('hello')).toBe('3015617425-6');
    expect(projectStatusKey('/tmp/é')).toMatch(/^\d+-8$/);
  });
});

describe('status line segments', () => {
  it('shows questions, then running work with who, step and activity, then recent results', () => {
    const segments = renderStatusSegments(
      [
        job({
          id: 't_run',
          profile: 'local',
          modelAnswered: 'qwen3',
          step: 4,
          maxTurns: 40,
          activity: 'editing\nsrc/a.ts',
          sandboxed: false,
        }),
        job({ id: 't_ask', state: 'needs_input', question: 'Which DB?' }),
        job({ id: 't_end', state: 'done', verdict: 'failed', endedAt: '2026-11-30T11:58:00Z' }),
        job({ id: 't_old', state: 'lost', endedAt: '2026-11-30T11:40:00Z' }),
        job({ id: 't_rev', state: 'done', endedAt: '2026-11-30T11:59:00Z', reviewedAt: 'x' }),
        job({ id: 't_cxl', state: 'cancelled', endedAt: '2026-11-30T11:59:00Z' }),
      ],
      NOW,
    );
    expect(segments.map((segment) => segment.text)).toEqual([
      't_ask asks "Which DB?" → task_answer',
      't_run · local qwen3 · step 4/40 · editing\\nsrc/a.ts · unsandboxed',
      't_end done failed → task_result',
    ]);
    // A finished result fades FINISHED_FADE_S after it ended, without a re-render.
    expect(segments[2]!.expiresAt).toBe(
      Date.parse('2026-11-30T11:58:00Z') / 1000 + FINISHED_FADE_S,
    );
    // Active work stays while its worker could still be writing, then goes stale.
    expect(segments[1]!.expiresAt).toBe(NOW_S + 300 + 300);
    expect(segments[0]!.expiresAt).toBe(NOW_S + 600 + 300);
  });

  it("dates active parts from the job's own last write, so re-rendering keeps no dead task alive", () => {
    const [quiet] = renderStatusSegments(
      [job({ id: 't_dead', updatedAt: '2026-11-30T11:30:00Z', idleTimeoutS: 3600 })],
      NOW,
    );
    // Capped at the status window however long the idle timeout: long expired by NOW.
    expect(quiet!.expiresAt).toBe(Date.parse('2026-11-30T11:30:00Z') / 1000 + STATUS_WINDOW_S);
    expect(quiet!.expiresAt).toBeLessThan(NOW_S);
  });

  it('keeps at most three active tasks and says how many more', () => {
    const jobs = ['a', 'b', 'c', 'd', 'e'].map((id) => job({ id: `t_${id}`, step: 1 }));
    const texts = renderStatusSegments(jobs, NOW).map((segment) => segment.text);
    expect(texts).toHaveLength(4);
    expect(texts[3]).toBe('+2 more active');
  });

  it('writes one line per segment, per project, and reads back only the fresh ones', () => {
    const file = formatStatusLines(
      new Map([
        [
          '/p',
          [
            { expiresAt: NOW_S + 10, text: 'fresh one' },
            { expiresAt: NOW_S - 1, text: 'stale' },
            { expiresAt: NOW_S + 5, text: 'two\nlines' },
          ],
        ],
        ['/q', [{ expiresAt: NOW_S + 10, text: 'other project' }]],
        ['/bad\tpath', [{ expiresAt: NOW_S + 10, text: 'cannot be keyed' }]],
      ]),
      { bootId: 'b-1', bootEpoch: 1_700_000_000 },
    );
    expect(file).toBe(
      `clock b-1 1700000000\n${NOW_S + 10} /p\tfresh one\n${NOW_S - 1} /p\tstale\n` +
        `${NOW_S + 5} /p\ttwo\\nlines\n${NOW_S + 10} /q\tother project\n`,
    );
    expect(freshStatusText(file, '/p', NOW)).toBe('delegate: fresh one | two\\nlines');
    expect(freshStatusText(file, '/q', NOW)).toBe('delegate: other project');
    expect(freshStatusText(file, '/p', NOW + 60_000)).toBe('');
    expect(freshStatusText('', '/p', NOW)).toBe('');
    expect(formatStatusLines(new Map(), undefined)).toBe('');
  });
});

describe('status lines per session', () => {
  const part = (text: string, expiresAt = NOW_S + 60) => ({ expiresAt, text });
  const file = formatStatusLines(
    new Map([['/p', [part('t_a1 · running'), part('t_b1 · running'), part('t_c1 done')]]]),
    undefined,
    new Map([
      [
        '/p',
        new Map([
          ['sess-a', [part('t_a1 · running')]],
          ['sess-b', [part('t_b1 · running'), part('t_b0 gone', NOW_S - 1)]],
          ['-', [part('t_c1 done')]],
        ]),
      ],
      ['/q', new Map([['sess-q', [part('t_q1 · running')]]])],
    ]),
  );

  it('writes the marker, one tagged line per session part, then the whole lines', () => {
    expect(file.split('\n')).toEqual([
      'sessions',
      `session sess-a ${NOW_S + 60} /p\tt_a1 · running`,
      `session sess-b ${NOW_S + 60} /p\tt_b1 · running`,
      `session sess-b ${NOW_S - 1} /p\tt_b0 gone`,
      `session - ${NOW_S + 60} /p\tt_c1 done`,
      `session sess-q ${NOW_S + 60} /q\tt_q1 · running`,
      `${NOW_S + 60} /p\tt_a1 · running`,
      `${NOW_S + 60} /p\tt_b1 · running`,
      `${NOW_S + 60} /p\tt_c1 done`,
      '',
    ]);
  });

  it('keeps the lines readers copied by an older plugin read: they skip every tagged line', () => {
    for (const line of file.split('\n').filter((text) => text.startsWith('session'))) {
      // Their rule: "<expires> <project><TAB>", the project being all between the space and the tab.
      expect(Number(line.slice(0, line.indexOf(' ')))).toBeNaN();
      expect(['/p', '/q']).not.toContain(line.slice(line.indexOf(' ') + 1, line.indexOf('\t')));
    }
  });

  it.each([
    [
      'no session: the whole line',
      undefined,
      '/p',
      'delegate: t_a1 · running | t_b1 · running | t_c1 done',
    ],
    [
      'its own part, then the others counted',
      'sess-a',
      '/p',
      'delegate: t_a1 · running | +2 other sessions',
    ],
    ['a stale part counts nobody', 'sess-b', '/p', 'delegate: t_b1 · running | +2 other sessions'],
    ['no task of its own', 'sess-new', '/p', 'delegate: +3 other sessions'],
    ['one other session, singular', 'sess-new', '/q', 'delegate: +1 other session'],
    [
      'an id the readers cannot match: the whole line',
      'not one word',
      '/p',
      'delegate: t_a1 · running | t_b1 · running | t_c1 done',
    ],
    ['a project with nothing', 'sess-a', '/r', ''],
  ])('%s', (_case, session, project, expected) => {
    expect(freshStatusText(file, project, NOW, session)).toBe(expected);
  });

  it('with a session id, reads a file an older writer made (no marker) as the whole line', () => {
    const old = `${NOW_S + 60} /p\tt_a1 · running\n`;
    expect(freshStatusText(old, '/p', NOW, 'sess-a')).toBe('delegate: t_a1 · running');
  });
});
