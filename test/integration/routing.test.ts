/**
 * Routing by verified outcomes, through the real server and real task workers: the ladder
 * (`escalate`) climbs from a rung whose work fails its tests to the next one inside one budget;
 * what every rung did lands in outcomes.jsonl; `profile: "auto"` then picks the profile that
 * passes in this project and says why, and in another project, with no history, explores
 * within the local-only rule.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { readOutcomes } from '../../server/src/calls/outcomes.ts';
import { CLI_BUNDLE } from '../helpers/cli-process.ts';
import type { FakeReply, RecordedRequest } from '../helpers/fake-provider.ts';
import { FIXED_ADD, git, initRepository, BROKEN_ADD_PROJECT } from '../helpers/git-project.ts';
import type { ServerHandle } from '../helpers/mcp-server.ts';
import { taskTest } from '../helpers/task-world.ts';
import { pollTaskStatus, taskIdOf } from '../helpers/wait.ts';

type Worker = (turn: number, request: RecordedRequest) => FakeReply;

const turnOf = (request: RecordedRequest): number =>
  (request.body?.messages ?? []).filter(
    (message: { role?: string }) => message.role === 'assistant',
  ).length;

const USAGE = { input: 1_000, output: 100 };
/** $1 per million tokens in, $2 out: a call of USAGE costs $0.0012. */
const PRICE = { inputPerMTok: 1, outputPerMTok: 2 };

const write = (content: string): FakeReply => ({
  toolUses: [{ name: 'write_file', input: { path: 'src/add.js', content } }],
  usage: USAGE,
});
/** Writes a wrong add(): its tests fail. */
const WRONG: Worker = (turn) =>
  turn === 0 ? write('exports.add = (a, b) => a * b;\n') : { text: 'Done.', usage: USAGE };
/** Fixes add(). */
const RIGHT: Worker = (turn) => (turn === 0 ? write(FIXED_ADD) : { text: 'Fixed.', usage: USAGE });

const it = taskTest.extend(
  'startWith',
  ({ world, provider, server }) =>
    async (
      config: Record<string, unknown>,
      workers: Record<string, Worker>,
      /** Profiles marked `local` (free, no price) instead of priced. */
      local: string[] = [],
    ): Promise<ServerHandle> => {
      const fake = await provider.start({
        respond: (request) => {
          const worker = workers[request.body?.model as string];
          if (!worker) throw new Error(`no worker for model ${request.body?.model}`);
          return worker(turnOf(request), request);
        },
      });
      const profile = (model: string) => ({
        format: 'openai',
        baseUrl: fake.openaiBaseUrl,
        model,
        ...(local.includes(model) ? { local: true } : { price: PRICE }),
      });
      world.writeConfig({
        profiles: Object.fromEntries(Object.keys(workers).map((name) => [name, profile(name)])),
        tasks: { fixRounds: 0 },
        ...config,
      });
      return server.start({ ...world.env, DELEGATE_ROUTING_SEED: '7' });
    },
);

function cli(env: Record<string, string>, cwd: string, ...args: string[]) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [CLI_BUNDLE, ...args],
      { cwd, env, encoding: 'utf8' },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

async function ended(handle: ServerHandle, id: string): Promise<string> {
  await pollTaskStatus(handle, id, new RegExp(`^${id} (done|failed|cancelled|timeout|lost)`));
  return (await handle.callText('task_result', { task_id: id })).text;
}

describe('escalate: a ladder of profiles inside one budget', () => {
  it('a first rung whose work fails its tests climbs to the next, which passes; both rungs, their verdicts and costs are in the result, the second was told why and given what was left', async ({
    startWith,
    world,
    provider,
  }) => {
    const handle = await startWith({ budget: { perTaskUsd: 1 } }, { cheap: WRONG, strong: RIGHT });
    const started = await handle.callText('task_start', {
      task: 'Fix add() so the test passes',
      test_command: 'node test.js',
      escalate: ['cheap', 'strong'],
      budget_usd: 0.5,
    });
    expect(started.isError, started.text).toBe(false);
    const id = taskIdOf(started.text);
    expect(started.text).toContain(`a ladder of 2 rungs`);
    expect(started.text).toContain(`${id}a1 cheap → ${id}a2 strong`);
    const result = await ended(handle, id);

    expect(result).toMatch(new RegExp(`^${id} done — verdict: passed`));
    expect(result).toContain('ladder (2 rungs, climbed in this order');
    // Rung 1 cost two calls of $0.0012, rung 2 the same.
    expect(result).toMatch(
      new RegExp(`${id}a1 cheap: done failed · \\$0\\.0024 — its tests failed`),
    );
    expect(result).toMatch(new RegExp(`${id}a2 strong: done passed · \\$0\\.0024 — passed`));
    expect(result).toContain('cost: $0.0048');
    // The passing rung's work is on the task's branch.
    expect(git(world.project, 'show', `delegate/${id}:src/add.js`)).toBe(FIXED_ADD.trim());

    // What the endpoint was sent: the second rung started with the first one's failure.
    const strongFirst = provider.started!.requests.find(
      (request) => request.body?.model === 'strong',
    );
    const prompt = JSON.stringify(strongFirst?.body?.messages);
    expect(prompt).toContain('Earlier workers tried this task');
    expect(prompt).toContain('Rung 1 (profile cheap) ended done, tests failed');
    expect(prompt).toContain('add(2, 3) should be 5');
    // Its cap was what the first rung left of the one budget.
    const rung2 = JSON.parse(
      readFileSync(join(world.dataHome, 'jobs', `${id}a2`, 'job.json'), 'utf8'),
    ) as { budgetUsd: number };
    expect(rung2.budgetUsd).toBeCloseTo(0.5 - 0.0024, 6);

    // The scoreboard learned from each rung: cheap failed, strong passed, nothing for the task itself.
    const outcomes = readOutcomes(world.dataHome).map(({ profile, passed, by, kind, taskId }) => ({
      profile,
      passed,
      by,
      kind,
      taskId,
    }));
    expect(outcomes).toEqual([
      { profile: 'cheap', passed: false, by: 'tests', kind: 'fix', taskId: `${id}a1` },
      { profile: 'strong', passed: true, by: 'tests', kind: 'fix', taskId: `${id}a2` },
    ]);

    // The scoreboard shows it: briefly in providers, whole in the CLI; a reset forgets it.
    const project = realpathSync(world.project);
    const providers = await handle.callText('providers', {});
    expect(providers.text).toContain('Scoreboard here (whole: delegate scoreboard):');
    expect(providers.text).toContain(
      '  strong · tasks: 1 of 1 verified task passed · $0.0024 per pass',
    );
    const board = await cli(world.env, world.project, 'scoreboard');
    expect(board.stdout).toContain(`Scoreboard of ${project} (2 recorded):`);
    expect(board.stdout).toContain('  cheap · tasks: 0 of 1 verified task passed · $0.0024 spent');
    expect(board.stdout).toContain('      fix: 1 of 1 verified task passed');
    const reset = await cli(
      world.env,
      world.project,
      'scoreboard',
      '--reset',
      '--profile',
      'cheap',
    );
    expect(reset.stdout).toBe(`Forgot 1 profile cheap's outcomes of ${project}.\n`);
    expect(readOutcomes(world.dataHome).map((record) => record.profile)).toEqual(['strong']);
    const wrong = await cli(world.env, world.project, 'scoreboard', '--profile', 'cheap');
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('--profile goes with --reset');
  });

  it('a rung that passes ends the ladder: the rungs above it never start and their worktrees go', async ({
    startWith,
    provider,
    world,
  }) => {
    const handle = await startWith({}, { cheap: RIGHT, strong: RIGHT });
    const id = taskIdOf(
      (
        await handle.callText('task_start', {
          task: 'Fix add()',
          test_command: 'node test.js',
          escalate: ['cheap', 'strong'],
        })
      ).text,
    );
    const result = await ended(handle, id);
    expect(result).toMatch(new RegExp(`^${id} done — verdict: passed`));
    expect(result).toContain(`${id}a2 strong: cancelled · $0.00 — not climbed: ${id}a1 passed`);
    expect(provider.started!.requests.every((r) => r.body?.model === 'cheap')).toBe(true);
    expect(git(world.project, 'branch', '--list', `delegate/${id}a2`)).toBe('');
    expect(git(world.project, 'worktree', 'list')).not.toContain(`${id}a2`);
  });

  it('refuses a ladder it could not judge, or that names a profile too', async ({ startWith }) => {
    const handle = await startWith({}, { cheap: RIGHT, strong: RIGHT });
    const unverified = await handle.callText('task_start', {
      task: 'Fix add()',
      escalate: ['cheap', 'strong'],
    });
    expect(unverified.isError).toBe(true);
    expect(unverified.text).toContain('pass test_command or definition_of_done too');
    const both = await handle.callText('task_start', {
      task: 'Fix add()',
      test_command: 'node test.js',
      profile: 'cheap',
      escalate: ['cheap', 'strong'],
    });
    expect(both.isError).toBe(true);
    expect(both.text).toContain('Pass profile or escalate, not both');
  });
});

describe('auto outside a git repository', () => {
  it.override('repository', null);

  it('with a test command it runs one pick in place: no ladder to refuse', async ({
    startWith,
    world,
  }) => {
    writeFileSync(join(world.project, 'test.js'), "console.log('ok');\n");
    const handle = await startWith({}, { cheap: RIGHT, strong: RIGHT }, ['cheap']);
    const started = await handle.callText('task_start', {
      task: 'Fix add()',
      test_command: 'node test.js',
      profile: 'auto',
      isolation: 'none',
    });
    expect(started.isError, started.text).toBe(false);
    expect(started.text).toMatch(/auto: (cheap|strong) — no verified tasks yet: exploring/);
    expect(started.text).not.toContain('ladder');
    await ended(handle, taskIdOf(started.text));
  });
});

describe('profile "auto": chosen by verified outcomes, explained in one line', () => {
  it('after a history where one profile fails its tests and another passes, auto picks the one that passes here and says why; in another project with no history it explores among the local profiles its rule allows', async ({
    startWith,
    world,
    server,
  }) => {
    // cheap is local (free), strong pays: on price alone, auto would start on cheap.
    const handle = await startWith({}, { cheap: WRONG, strong: RIGHT }, ['cheap']);
    // The history: ladders where cheap's work fails its tests and strong's passes.
    const rounds = 6;
    const ids = await Promise.all(
      Array.from({ length: rounds }, async () =>
        taskIdOf(
          (
            await handle.callText('task_start', {
              task: 'Fix add() so the test passes',
              test_command: 'node test.js',
              escalate: ['cheap', 'strong'],
            })
          ).text,
        ),
      ),
    );
    for (const id of ids) {
      expect(await ended(handle, id)).toMatch(new RegExp(`^${id} done — verdict: passed`));
      await handle.callText('task_cleanup', { task_id: id });
    }
    const chosen = await handle.callText('task_start', {
      task: 'Fix add() again',
      profile: 'auto',
    });
    expect(chosen.isError, chosen.text).toBe(false);
    expect(chosen.text).toMatch(
      /auto: strong — 6 of 6 fix tasks in this project passed, \$0\.0024 per pass \(next: cheap\)/,
    );
    const id = taskIdOf(chosen.text);
    const job = JSON.parse(readFileSync(join(world.dataHome, 'jobs', id, 'job.json'), 'utf8'));
    expect(job.profile).toBe('strong');
    expect(await ended(handle, id)).toContain('auto: strong');

    // Another project with no history, whose file makes the local profile the default: only
    // local profiles are candidates (strong, which passes elsewhere, is not), and the line
    // says it is exploring.
    const elsewhere = join(world.home, 'elsewhere');
    initRepository(elsewhere, BROKEN_ADD_PROJECT);
    mkdirSync(join(elsewhere, '.claude'), { recursive: true });
    writeFileSync(
      join(elsewhere, '.claude', 'delegate.json'),
      JSON.stringify({ defaultProfile: 'cheap' }),
    );
    const there = await server.start({ ...world.env, CLAUDE_PROJECT_DIR: elsewhere });
    const explored = await there.callText('task_start', { task: 'Fix add()', profile: 'auto' });
    expect(explored.isError, explored.text).toBe(false);
    expect(explored.text).toContain(
      'auto: cheap — 0 of 6 tasks elsewhere passed; nothing here yet: exploring (the only candidate)',
    );
    await ended(there, taskIdOf(explored.text));
  });
});

describe('attempt_profiles "auto"', () => {
  it('races the K best, each a different profile, and says why', async ({ startWith }) => {
    const handle = await startWith({}, { cheap: RIGHT, strong: RIGHT });
    const started = await handle.callText('task_start', {
      task: 'Fix add()',
      test_command: 'node test.js',
      attempts: 2,
      attempt_profiles: 'auto',
    });
    expect(started.isError, started.text).toBe(false);
    const id = taskIdOf(started.text);
    const raced = new RegExp(
      `2 attempts \\(first_pass\\), each in its own worktree: ${id}a1 (\\w+), ${id}a2 (\\w+)`,
    ).exec(started.text);
    expect(raced, started.text).not.toBeNull();
    expect(new Set([raced![1], raced![2]])).toEqual(new Set(['cheap', 'strong']));
    expect(started.text).toMatch(/auto: (cheap|strong) — /);
    await ended(handle, id);
  });
});

describe('one-shots and explorations: auto, and what they teach', () => {
  it('a delegate call with profile "auto" ends with the reason; a whole answer counts as passed, a cut-off one and an error as failed', async ({
    startWith,
    world,
  }) => {
    const replies: FakeReply[] = [
      { text: 'All fine.', usage: USAGE },
      { text: 'The answer was cut', stopReason: 'length', usage: USAGE },
      { kind: 'error', status: 400, body: { error: { message: 'bad request' } } },
    ];
    const handle = await startWith({}, { only: () => replies.shift()! });
    const whole = await handle.callText('delegate', {
      task: 'Where is add() defined?',
      profile: 'auto',
    });
    expect(whole.isError, whole.text).toBe(false);
    expect(whole.text.split('\n').at(-1)).toBe(
      'auto: only — no verified one-shots yet: exploring (the only candidate)',
    );
    await handle.callText('delegate', { task: 'Where is add() defined?', profile: 'only' });
    const failed = await handle.callText('delegate', {
      task: 'Where is add() defined?',
      profile: 'only',
    });
    expect(failed.isError).toBe(true);
    expect(
      readOutcomes(world.dataHome).map(({ work, kind, passed, by, cutOff }) => ({
        work,
        kind,
        passed,
        by,
        ...(cutOff ? { cutOff } : {}),
      })),
    ).toEqual([
      { work: 'one-shot', kind: 'question', passed: true, by: 'answer' },
      { work: 'one-shot', kind: 'question', passed: false, by: 'answer', cutOff: true },
      { work: 'one-shot', kind: 'question', passed: false, by: 'error' },
    ]);
  });

  it('an exploration counts as passed when every path:line it cites is there, failed when one points at nothing', async ({
    startWith,
    world,
  }) => {
    const replies: FakeReply[] = [
      { text: 'add() is defined in src/add.js:1.', usage: USAGE },
      { text: 'add() is defined in src/gone.js:3.', usage: USAGE },
    ];
    const handle = await startWith({}, { only: () => replies.shift()! });
    const good = await handle.callText('explore', {
      question: 'Where is add() defined?',
      profile: 'auto',
    });
    expect(good.isError, good.text).toBe(false);
    expect(good.text).toContain(
      'auto: only — no verified explorations yet: exploring (the only candidate)',
    );
    const bad = await handle.callText('explore', { question: 'Where is add() defined?' });
    expect(bad.isError, bad.text).toBe(false);
    expect(readOutcomes(world.dataHome).map(({ work, passed }) => `${work} ${passed}`)).toEqual([
      'explore true',
      'explore false',
    ]);
  });
});
