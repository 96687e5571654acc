import { describe, expect, it } from 'vitest';
import type { LoadedConfig } from '../../server/src/profiles/load-config.ts';
import { createFixRounds } from '../../server/src/tasks/fix-rounds.ts';
import { parseVerdict, pickReviewProfile } from '../../server/src/tasks/review.ts';
import type { ResolvedProfile } from '../../server/src/config/resolved-profile.ts';
import type { VerificationFacts } from '../../server/src/store/job-file.ts';

function profile(name: string, local: boolean): ResolvedProfile {
  return {
    name,
    format: 'openai',
    baseUrl: 'http://127.0.0.1:1/v1',
    model: `${name}-model`,
    local,
    source: 'config',
    origin: 'config.json',
  };
}

function config(profiles: ResolvedProfile[], extra: Partial<LoadedConfig> = {}): LoadedConfig {
  return {
    profiles: new Map(profiles.map((entry) => [entry.name, entry])),
    budget: {},
    tasks: {},
    files: [],
    configFile: 'config.json',
    ...extra,
  };
}

describe('pickReviewProfile', () => {
  const local = profile('local', true);
  const local2 = profile('local2', true);
  const cloud = profile('cloud', false);
  const cloud2 = profile('cloud2', false);

  it('takes tasks.reviewProfile when configured, and names the profiles when it is unknown', () => {
    const named = config([cloud, cloud2], { tasks: { reviewProfile: 'cloud2' } });
    expect(pickReviewProfile(named, cloud, undefined)).toBe('cloud2');
    const unknown = config([cloud], { tasks: { reviewProfile: 'nope' } });
    expect(() => pickReviewProfile(unknown, cloud, undefined)).toThrow(
      /tasks.reviewProfile "nope" is not a profile \(profiles: cloud\)/,
    );
  });

  it('prefers the reviewer agent’s hint, then the default, then another profile, then the worker’s own', () => {
    expect(pickReviewProfile(config([cloud, cloud2, local]), cloud, 'local')).toBe('local');
    expect(
      pickReviewProfile(
        config([cloud, local, cloud2], { defaultProfile: 'cloud2' }),
        cloud,
        undefined,
      ),
    ).toBe('cloud2');
    expect(pickReviewProfile(config([cloud, cloud2]), cloud, undefined)).toBe('cloud2');
    expect(pickReviewProfile(config([cloud]), cloud, undefined)).toBe('cloud');
  });

  it('never reviews on a CLI engine, which calls no model API: another profile, or none', () => {
    const cli: ResolvedProfile = { ...profile('cc', false), format: 'claude-cli' };
    const cli2: ResolvedProfile = { ...profile('codex', false), format: 'codex-cli' };
    expect(
      pickReviewProfile(config([cli, cli2, cloud], { defaultProfile: 'codex' }), cli, 'cc'),
    ).toBe('cloud');
    expect(pickReviewProfile(config([cli, cli2]), cli, undefined)).toBeUndefined();
    const named = config([cli, cli2, cloud], { tasks: { reviewProfile: 'codex' } });
    expect(() => pickReviewProfile(named, cloud, undefined)).toThrow(
      /tasks.reviewProfile "codex" is a CLI engine, and the reviewer calls a model API/,
    );
  });

  it('never sends a local task’s diff to a cloud profile on its own', () => {
    const mixed = config([local, cloud, local2], { defaultProfile: 'cloud' });
    expect(pickReviewProfile(mixed, local, 'cloud')).toBe('local2');
    expect(pickReviewProfile(config([local, cloud]), local, undefined)).toBe('local');
  });
});

describe('parseVerdict', () => {
  it.each([
    ['VERDICT: pass\n- criteria met', 'pass', '- criteria met'],
    ['**VERDICT: FAIL**\nProblems: x', 'fail', 'Problems: x'],
    ['Some preamble.\nVERDICT: fail — tests weak\nmore', 'fail', 'Some preamble.\n\nmore'],
    ['## Verdict: pass', 'pass', '(no reasons given)'],
    ['Looks good to me.', 'unclear', 'Looks good to me.'],
    ['', 'unclear', '(empty answer)'],
  ])('%j → %s', (answer, verdict, notes) => {
    expect(parseVerdict(answer)).toEqual({ verdict, notes });
  });
});

describe('fix rounds', () => {
  const facts = (exitCode: number | null): VerificationFacts => ({
    command: 'npm test',
    exitCode,
    outputTail: `exit ${exitCode}`,
    ms: 1,
  });

  function rounds(exits: Array<number | null>, count: number, mayContinue = () => true) {
    const queue = [...exits];
    let runs = 0;
    const fix = createFixRounds({
      command: 'npm test',
      rounds: count,
      turnsPerRound: 10,
      runTests: () => {
        runs += 1;
        return Promise.resolve(facts(queue.shift() ?? 0));
      },
      mayContinue,
    });
    return { fix, runs: () => runs };
  }

  it('sends a failure back with its output while rounds are left, and stops on green', async () => {
    const { fix, runs } = rounds([1, 0], 2);
    const next = await fix.afterAnswer();
    expect(next?.extraTurns).toBe(10);
    expect(next?.message).toContain('`npm test` failed with exit code 1');
    expect(next?.message).toContain('round 1 of 2');
    expect(await fix.afterAnswer()).toBeUndefined();
    expect((await fix.finalFacts()).exitCode).toBe(0);
    expect(fix.failedAttempts().map((attempt) => attempt.exitCode)).toEqual([1]);
    expect(runs()).toBe(2);
  });

  it('stops after the configured rounds, and never retries a broken runner or a cancelled task', async () => {
    const out = rounds([1, 1, 1], 1);
    expect(await out.fix.afterAnswer()).toBeDefined();
    expect(await out.fix.afterAnswer()).toBeUndefined();
    expect(out.fix.failedAttempts()).toHaveLength(1);
    expect(await rounds([127], 3).fix.afterAnswer()).toBeUndefined();
    expect(await rounds([1], 3, () => false).fix.afterAnswer()).toBeUndefined();
  });

  it('tests once more when the run ended without a verified answer', async () => {
    const { fix, runs } = rounds([1, 0], 2);
    await fix.afterAnswer(); // failed, a round started, then the turn budget ran out
    expect((await fix.finalFacts()).exitCode).toBe(0);
    expect(runs()).toBe(2);
    const untested = rounds([1], 2);
    expect((await untested.fix.finalFacts()).exitCode).toBe(1);
    expect(untested.fix.failedAttempts()).toEqual([]);
  });
});
