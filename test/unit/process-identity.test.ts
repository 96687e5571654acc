import { describe, expect, it } from 'vitest';
import {
  currentProcessIdentity,
  isProcessAlive,
  parseProcessStat,
} from '../../server/src/util/process-identity.ts';

/** Above Linux's PID_MAX_LIMIT (2^22) and macOS's limit: no process can have it. */
const IMPOSSIBLE_PID = 4_194_305;

const statLine = (comm: string, state: string, startTime: string) =>
  `4242 (${comm}) ${state} 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 ${startTime} 8192 100 18446744073709551615`;

describe('parseProcessStat', () => {
  it('reads state and start time after the last ")" of the command name', () => {
    expect(parseProcessStat(statLine('sleep', 'S', '123456'))).toEqual({
      state: 'S',
      startTime: '123456',
    });
    // A name made to look like fields: splitting at the first ")" would read state Z.
    expect(parseProcessStat(statLine('a) Z 1 (b', 'R', '77'))).toEqual({
      state: 'R',
      startTime: '77',
    });
    expect(parseProcessStat(`${statLine('x)', 'Z', '9')}\n`)).toEqual({
      state: 'Z',
      startTime: '9',
    });
  });

  it('gives undefined for text that is not a stat line', () => {
    expect(parseProcessStat('')).toBeUndefined();
    expect(parseProcessStat('4242 sleep S 1')).toBeUndefined();
    expect(parseProcessStat('4242 (sleep) S 1 2 3')).toBeUndefined();
  });
});

describe('isProcessAlive', () => {
  it('says the current process is alive', () => {
    const identity = currentProcessIdentity();
    expect(identity.pid).toBe(process.pid);
    if (process.platform === 'linux') expect(identity.startTime).toMatch(/^\d+$/);
    expect(isProcessAlive(identity)).toBe(true);
  });

  it('says a pid no process has is dead, and so are pids kill() reads as groups', () => {
    expect(isProcessAlive({ pid: IMPOSSIBLE_PID, startTime: '' })).toBe(false);
    for (const pid of [0, -1, Number.NaN, 1.5]) {
      expect(isProcessAlive({ pid, startTime: '' })).toBe(false);
    }
  });

  it.skipIf(process.platform !== 'linux')(
    'says a live pid with another start time is dead (the pid was reused)',
    () => {
      const { startTime } = currentProcessIdentity();
      expect(isProcessAlive({ pid: process.pid, startTime: `${startTime}0` })).toBe(false);
      expect(isProcessAlive({ pid: process.pid, startTime: '' })).toBe(true);
    },
  );
});
