import { describe, expect, it } from 'vitest';
import {
  FINISHED_FADE_S,
  STATUS_WINDOW_S,
  formatStatusLines,
  freshStatusText,
  renderStatusSegments,
  type StatusJob,
} from '../../server/src/store/render-status.ts';
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
