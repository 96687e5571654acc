import { describe, expect, it } from 'vitest';
import { timeScaleOf } from '../helpers/timing.ts';

// The one factor every test window is scaled by (test/helpers/timing.ts).
describe('the test time scale', () => {
  it.each([
    [{}, 1],
    [{ CI: 'true' }, 2],
    [{ CI: '1' }, 2],
    [{ CI: 'false' }, 1],
    [{ CI: '0' }, 1],
    [{ CI: '' }, 1],
    [{ DELEGATE_TEST_TIME_SCALE: '3' }, 3],
    [{ DELEGATE_TEST_TIME_SCALE: ' 1.5 ' }, 1.5],
    [{ DELEGATE_TEST_TIME_SCALE: '1', CI: 'true' }, 1],
    [{ DELEGATE_TEST_TIME_SCALE: '', CI: 'true' }, 2],
  ])('%o → %d', (env, scale) => {
    expect(timeScaleOf(env)).toBe(scale);
  });

  it.each(['0.5', '0', '-2', 'abc', 'Infinity'])('refuses %s, saying what to use', (value) => {
    expect(() => timeScaleOf({ DELEGATE_TEST_TIME_SCALE: value })).toThrow(
      `DELEGATE_TEST_TIME_SCALE=${value}: use a number of at least 1`,
    );
  });
});
