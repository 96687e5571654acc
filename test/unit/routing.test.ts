/**
 * Routing by verified outcomes, in-process: the task kinds, the scoreboard's figures, the
 * Thompson ranking (what evidence makes it pick, and that thin evidence still gets tries), the
 * candidates `auto` may take (configured, approved, runnable, local-only rule, budget), and
 * what a task's end teaches.
 */
import { appendFileSync, readFileSync, statSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import {
  chooseProfile,
  rankProfiles,
  routeReason,
  seededRandom,
  type Candidate,
} from '../../server/src/calls/choose-profile.ts';
import {
  appendOutcome,
  outcomesPath,
  readOutcomes,
  resetOutcomes,
  type OutcomeRecord,
} from '../../server/src/calls/outcomes.ts';
import { scoreRows, scoreboardText } from '../../server/src/calls/scoreboard.ts';
import { taskKind, useMentions } from '../../server/src/calls/task-kind.ts';
import { verifiedOutcome } from '../../server/src/tasks/finish-task.ts';
import { loadConfig } from '../../server/src/profiles/load-config.ts';
import type { JobFile } from '../../server/src/store/job-file.ts';
import { appContext } from '../helpers/app-context.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';

let world: TempEnv | undefined;
afterEach(() => world?.cleanup());
const newWorld = () => (world = createTempEnv());

const PROJECT = '/p/one';
function record(
  fields: Partial<OutcomeRecord> & Pick<OutcomeRecord, 'profile' | 'passed'>,
): OutcomeRecord {
  return {
    ts: '2026-12-02T10:00:00.000Z',
    work: 'task',
    project: PROJECT,
    kind: 'fix',
    by: 'tests',
    costUsd: 0.01,
    ms: 1_000,
    ...fields,
  };
}
const times = (n: number, make: () => OutcomeRecord) => Array.from({ length: n }, make);

describe('task kinds: the one feature outcomes are scored under', () => {
  it.each([
    ['Fix the crash when the file is empty', 'fix'],
    ['The parser fails on CRLF input', 'fix'],
    ['fix the failing test in add.test.js', 'fix'],
    ['Refactor the loader into two modules', 'refactor'],
    ['Rename getUser to findUser everywhere', 'refactor'],
    ['Write tests for the date helpers', 'tests'],
    ['Raise coverage of src/cli', 'tests'],
    ['Document the config options in the README', 'docs'],
    ['Add docstrings to util.py', 'docs'],
    ['Where is the retry policy defined?', 'question'],
    ['how does the cache expire entries', 'question'],
    ['Add a --json flag', 'feature'],
    ['Implement pagination for /users', 'feature'],
    ['', 'feature'],
  ])('%j is %s', (task, kind) => {
    expect(taskKind(task)).toBe(kind);
  });

  it('the first line decides, and an agent names the kind', () => {
    expect(taskKind('Add a flag\n\nIt must fix the bug in the old one')).toBe('feature');
    expect(taskKind('Fix it', 'reviewer')).toBe('agent:reviewer');
  });

  it('a `use` line that names the kind is a prior for it', () => {
    expect(useMentions('fast model for bug fixes', 'fix')).toBe(true);
    expect(useMentions('writes documentation well', 'docs')).toBe(true);
    expect(useMentions('fast model for bug fixes', 'docs')).toBe(false);
    expect(useMentions('the reviewer agent', 'agent:reviewer')).toBe(true);
  });
});

describe('the scoreboard', () => {
  it('counts runs, verified passes, cost per pass, median time and fix rounds per profile and kind', () => {
    const records = [
      record({ profile: 'qwen', passed: true, costUsd: 0.002, ms: 10_000, fixRounds: 0 }),
      record({ profile: 'qwen', passed: true, costUsd: 0.004, ms: 30_000, fixRounds: 2 }),
      record({ profile: 'qwen', passed: false, costUsd: 0.003, ms: 20_000, fixRounds: 2 }),
      record({ profile: 'qwen', passed: null, by: 'none', costUsd: 0.001, ms: 5_000 }),
      record({ profile: 'qwen', passed: true, kind: 'docs', costUsd: 0.001, ms: 1_000 }),
      record({ profile: 'big', passed: true, costUsd: 0.3, ms: 60_000 }),
      record({ profile: 'big', work: 'one-shot', passed: false, by: 'error', costUsd: 0, ms: 100 }),
      record({
        profile: 'big',
        work: 'one-shot',
        passed: false,
        by: 'answer',
        cutOff: true,
        costUsd: 0.01,
        ms: 100,
      }),
    ];
    const rows = scoreRows(records, { byKind: true });
    const qwen = rows.find((row) => row.profile === 'qwen' && row.kind === undefined)!;
    expect(qwen).toMatchObject({
      runs: 5,
      verified: 4,
      passed: 3,
      medianMs: 10_000,
      medianFixRounds: 1,
    });
    expect(qwen.costPerPass).toBeCloseTo(0.011 / 3, 10);
    const qwenFix = rows.find((row) => row.profile === 'qwen' && row.kind === 'fix')!;
    expect(qwenFix).toMatchObject({ runs: 4, verified: 3, passed: 2, medianFixRounds: 2 });
    const oneShots = rows.find((row) => row.work === 'one-shot' && row.kind === undefined)!;
    expect(oneShots).toMatchObject({ runs: 2, passed: 0, errors: 1, cutOffs: 1 });
    expect(oneShots.costPerPass).toBeUndefined();

    const text = scoreboardText(records, PROJECT);
    expect(text).toContain(`Scoreboard of ${PROJECT} (8 recorded):`);
    expect(text).toContain(
      '  qwen · tasks: 3 of 4 verified tasks passed · $0.0037 per pass · median 10.0 s · median fix rounds 1 · 1 unverified or stopped',
    );
    expect(text).toContain('      fix: 2 of 3 verified tasks passed');
    expect(text).toContain(
      '  big · one-shots: 0 of 2 verified one-shots answered whole · $0.01 spent',
    );
    expect(text).toContain('1 error · 1 cut off');
    expect(scoreboardText(records, '/elsewhere')).toContain('nothing recorded yet');
  });

  it('the file: torn lines are skipped, and a reset forgets one project, or one profile of it', async () => {
    const { dataHome } = newWorld();
    await appendOutcome(dataHome, record({ profile: 'a', passed: true }));
    appendFileSync(outcomesPath(dataHome), '{"torn": \n');
    await appendOutcome(dataHome, record({ profile: 'b', passed: false }));
    await appendOutcome(dataHome, record({ profile: 'a', passed: true, project: '/p/two' }));
    expect(readOutcomes(dataHome).map((r) => r.profile)).toEqual(['a', 'b', 'a']);
    expect(resetOutcomes(dataHome, { project: PROJECT, profile: 'a' })).toBe(1);
    expect(readOutcomes(dataHome).map((r) => `${r.profile}@${r.project}`)).toEqual([
      `b@${PROJECT}`,
      'a@/p/two',
    ]);
    expect(statSync(outcomesPath(dataHome)).mode & 0o777).toBe(0o600);
    expect(resetOutcomes(dataHome, { project: PROJECT })).toBe(1);
    expect(resetOutcomes(dataHome)).toBe(1);
    expect(readOutcomes(dataHome)).toEqual([]);
  });

  it('the file stays bounded: the append that crosses the bound keeps the newest half', async () => {
    const { dataHome } = newWorld();
    const numbered = (index: number) =>
      record({ profile: 'a', passed: true, taskId: `t_${index}` });
    const bound = Buffer.byteLength(`${JSON.stringify(numbered(100))}\n`) * 10; // ten records
    for (let index = 100; index < 130; index += 1) {
      await appendOutcome(dataHome, numbered(index), bound);
      expect(statSync(outcomesPath(dataHome)).size).toBeLessThan(bound);
    }
    const ids = readOutcomes(dataHome).map((r) => r.taskId);
    // Each compaction keeps the newest five; the appends since follow them, in order.
    expect(ids.at(-1)).toBe('t_129');
    expect(ids).toEqual(ids.slice().sort());
    expect(ids.length).toBeGreaterThanOrEqual(5);
    expect(ids.length).toBeLessThan(10);
    expect(statSync(outcomesPath(dataHome)).mode & 0o777).toBe(0o600);
  });
});

describe('ranking: one Thompson draw per candidate, passes per dollar', () => {
  const cheap: Candidate = { name: 'cheap', priorCostUsd: 0, priorPass: 0.35 };
  const strong: Candidate = { name: 'strong', priorCostUsd: 0.05, priorPass: 0.65 };
  const rank = (
    records: OutcomeRecord[],
    seed: number,
    kind = 'fix',
    candidates = [cheap, strong],
  ) =>
    rankProfiles({
      work: 'task',
      project: PROJECT,
      kind,
      candidates,
      records,
      random: seededRandom(seed),
    });
  const firstPicks = (records: OutcomeRecord[], kind = 'fix', candidates = [cheap, strong]) => {
    const counts = new Map<string, number>();
    for (let seed = 1; seed <= 200; seed += 1) {
      const name = rank(records, seed, kind, candidates)[0]!.name;
      counts.set(name, (counts.get(name) ?? 0) + 1);
    }
    return counts;
  };

  it('with no record, a free profile is tried most and the paid one sometimes: it explores', () => {
    const picks = firstPicks([]);
    expect(picks.get('cheap')).toBeGreaterThan(100);
    expect(picks.get('strong') ?? 0).toBeGreaterThan(0);
  });

  it('once the free one fails its tests here and the paid one passes, the paid one is picked nearly always (≥ 90 %)', () => {
    const history = [
      ...times(8, () => record({ profile: 'cheap', passed: false, costUsd: 0 })),
      ...times(8, () => record({ profile: 'strong', passed: true, costUsd: 0.05 })),
    ];
    expect(firstPicks(history).get('strong')).toBeGreaterThanOrEqual(180);
  });

  it('evidence is per kind: the free one keeps the kind it passes (≥ 95 %) and mostly loses the one it fails (≥ 75 %)', () => {
    const history = [
      ...times(8, () => record({ profile: 'cheap', passed: true, kind: 'docs', costUsd: 0 })),
      ...times(8, () => record({ profile: 'cheap', passed: false, kind: 'fix', costUsd: 0 })),
      ...times(8, () => record({ profile: 'strong', passed: true, kind: 'fix', costUsd: 0.05 })),
    ];
    expect(firstPicks(history, 'docs').get('cheap')).toBeGreaterThanOrEqual(190);
    expect(firstPicks(history, 'fix').get('strong')).toBeGreaterThanOrEqual(150);
  });

  it("another project's record is a prior here, not a verdict: thin evidence still gets tries", () => {
    const elsewhere = times(8, () =>
      record({ profile: 'cheap', passed: false, project: '/p/two', costUsd: 0 }),
    );
    const picks = firstPicks(elsewhere);
    expect(picks.get('strong')).toBeGreaterThan(100);
    expect(picks.get('cheap') ?? 0).toBeGreaterThan(5);
  });

  it('the reason cites the record it chose on, in one line', () => {
    const history = [
      ...times(9, () => record({ profile: 'strong', passed: true, costUsd: 0.02 })),
      record({ profile: 'strong', passed: false, costUsd: 0.02 }),
      ...times(6, () => record({ profile: 'cheap', passed: false, costUsd: 0 })),
    ];
    const ranked = rank(history, 3);
    expect(routeReason(ranked, 'task')).toBe(
      'auto: strong — 9 of 10 fix tasks in this project passed, $0.0222 per pass (next: cheap)',
    );
    expect(routeReason(rank([], 3, 'fix', [strong]), 'task')).toBe(
      'auto: strong — no verified tasks yet: exploring (the only candidate)',
    );
    const thin = [record({ profile: 'strong', passed: true, costUsd: 0.02 })];
    expect(routeReason(rank(thin, 3, 'fix', [strong]), 'task')).toBe(
      'auto: strong — 1 of 1 fix tasks in this project passed, $0.02 per pass; still exploring (the only candidate)',
    );
  });
});

describe('candidates: only what the user configured, may run, keeps local work local, fits the budget', () => {
  const profile = (extra: object = {}) => ({
    format: 'openai',
    baseUrl: 'http://127.0.0.1:9/v1',
    model: 'm',
    ...extra,
  });
  const choose = (work: 'task' | 'one-shot' = 'one-shot', env: Record<string, string> = {}) =>
    chooseProfile(
      { work, kind: 'fix' },
      appContext(world!, { DELEGATE_ROUTING_SEED: '1', ...env }),
    );
  const names = async (work: 'task' | 'one-shot' = 'one-shot') =>
    (await choose(work)).ranked.map((entry) => entry.name).sort();

  it('every configured profile that can run, none that cannot (no key, a CLI for a one-shot)', async () => {
    newWorld().writeConfig({
      profiles: {
        a: profile({ local: true }),
        b: profile({ price: { inputPerMTok: 1, outputPerMTok: 2 } }),
        nokey: profile({ apiKeyEnv: 'NO_SUCH_KEY_VARIABLE' }),
        codex: { format: 'codex-cli', model: 'gpt-5-codex' },
      },
      defaultProfile: 'b',
    });
    expect(await names()).toEqual(['a', 'b']);
  });

  it('a local default keeps auto among local profiles, unless autoProfiles says otherwise', async () => {
    newWorld().writeConfig({
      profiles: { a: profile({ local: true }), c: profile({ local: true }), b: profile() },
      defaultProfile: 'a',
    });
    expect(await names()).toEqual(['a', 'c']);
    world!.writeConfig({
      profiles: { a: profile({ local: true }), c: profile({ local: true }), b: profile() },
      defaultProfile: 'a',
      autoProfiles: ['a', 'b'],
    });
    expect(await names()).toEqual(['a', 'b']);
  });

  it('a project file cannot widen autoProfiles, nor name a profile "auto"', () => {
    const w = newWorld();
    w.writeConfig({ profiles: { a: profile({ local: true }), b: profile() }, defaultProfile: 'a' });
    w.writeProjectFile('.claude/delegate.json', JSON.stringify({ autoProfiles: ['b'] }));
    const config = loadConfig(w.dataHome, w.project, w.env);
    expect(config.autoProfiles).toBeUndefined();
    expect(config.warnings?.join('\n')).toContain(
      'sets autoProfiles (b), which only your own config may do',
    );
    w.writeConfig({ profiles: { auto: profile() } });
    expect(() => loadConfig(w.dataHome, w.project, w.env)).toThrow(/"auto" is reserved/);
  });

  it('a profile whose run would cost more than the budget left is no candidate; none left is an error', async () => {
    newWorld().writeConfig({
      profiles: {
        a: profile({ price: { inputPerMTok: 0.1, outputPerMTok: 0.1 } }),
        b: profile({ price: { inputPerMTok: 100, outputPerMTok: 100 } }),
      },
      defaultProfile: 'a',
      budget: { dailyUsd: 0.5 },
    });
    // A typical task: 150,000 tokens in and 8,000 out: a $0.0158, b $15.80.
    expect(await names('task')).toEqual(['a']);
    world!.writeConfig({
      profiles: { b: profile({ price: { inputPerMTok: 100, outputPerMTok: 100 } }) },
      budget: { dailyUsd: 0.5 },
    });
    await expect(choose('task')).rejects.toThrow(
      /auto: every candidate is expected to cost more than the budget left: b \(about \$15\.80 a run\)/,
    );
  });

  it('an autoProfiles entry that is no configured profile is refused with the reason', async () => {
    newWorld().writeConfig({ profiles: { a: profile() }, autoProfiles: ['ghost'] });
    await expect(choose()).rejects.toThrow(
      /auto: no profile can take this one-shot\. ghost: not a configured, approved profile/,
    );
  });
});

describe("what a task's end teaches the scoreboard", () => {
  const job = (fields: Partial<JobFile>): JobFile =>
    ({
      id: 't_abcdef',
      project: PROJECT,
      state: 'done',
      task: 'Fix add()',
      profile: 'qwen',
      startedAt: '2026-12-02T10:00:00.000Z',
      endedAt: '2026-12-02T10:00:30.000Z',
      costUsd: 0.01,
      ...fields,
    }) as JobFile;
  const review = (verdict: 'pass' | 'fail' | 'unclear' | 'error') => ({
    verdict,
    notes: '',
    profile: 'r',
    turns: 1,
  });

  it.each([
    ['tests passed', { testCommand: 't', verdict: 'passed' as const }, true, 'tests'],
    ['tests failed', { testCommand: 't', verdict: 'failed' as const }, false, 'tests'],
    ['worker failed', { testCommand: 't', state: 'failed' as const }, false, 'error'],
    ['timed out', { testCommand: 't', state: 'timeout' as const }, false, 'error'],
    ['cancelled', { testCommand: 't', state: 'cancelled' as const }, null, 'stopped'],
    ['lost', { testCommand: 't', state: 'lost' as const }, null, 'stopped'],
    ['no tests, no reviewer', {}, null, 'none'],
    [
      'review pass',
      { definitionOfDone: 'd', reviewProfile: 'r', review: review('pass') },
      true,
      'review',
    ],
    [
      'review fail',
      { definitionOfDone: 'd', reviewProfile: 'r', review: review('fail') },
      false,
      'review',
    ],
    [
      'tests pass, review unclear',
      {
        testCommand: 't',
        verdict: 'passed' as const,
        definitionOfDone: 'd',
        reviewProfile: 'r',
        review: review('unclear'),
      },
      false,
      'tests+review',
    ],
    [
      'tests pass, reviewer broke',
      {
        testCommand: 't',
        verdict: 'passed' as const,
        definitionOfDone: 'd',
        reviewProfile: 'r',
        review: review('error'),
      },
      true,
      'tests+review',
    ],
  ])('%s', (_what, fields, passed, by) => {
    expect(verifiedOutcome(job(fields))).toMatchObject({
      passed,
      by,
      kind: 'fix',
      ms: 30_000,
      profile: 'qwen',
      taskId: 't_abcdef',
    });
  });

  it('a task over attempts, or one that never ran, teaches nothing', () => {
    expect(verifiedOutcome(job({ profile: undefined }))).toBeUndefined();
    expect(verifiedOutcome(job({ startedAt: undefined }))).toBeUndefined();
  });

  it('outcomes never hold a task text or a path beyond the project', async () => {
    const { dataHome } = newWorld();
    await appendOutcome(
      dataHome,
      verifiedOutcome(job({ testCommand: 't', verdict: 'passed', task: 'SECRET-TASK-TEXT' }))!,
    );
    expect(readFileSync(outcomesPath(dataHome), 'utf8')).not.toContain('SECRET-TASK-TEXT');
  });
});
