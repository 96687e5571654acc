import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { readLedger } from '../../server/src/calls/ledger.ts';
import { formatUsd } from '../../server/src/util/format-usd.ts';
import type { FakeReply, RecordedRequest } from '../helpers/fake-provider.ts';
import { BROKEN_ADD_PROJECT, FIXED_ADD, git } from '../helpers/git-project.ts';
import type { ServerHandle } from '../helpers/mcp-server.ts';
import { liveProcesses } from '../helpers/processes.ts';
import { taskTest } from '../helpers/task-world.ts';
import { pollTaskStatus, pollTool, taskIdOf, waitFor } from '../helpers/wait.ts';

const use = (name: string, input: Record<string, unknown>): FakeReply => ({
  toolUses: [{ name, input }],
});

/** A worker's reply at assistant turn `turn` of its conversation. */
type Worker = (turn: number, request: RecordedRequest) => FakeReply | Promise<FakeReply>;

const turnOf = (request: RecordedRequest): number =>
  (request.body?.messages ?? []).filter(
    (message: { role?: string }) => message.role === 'assistant',
  ).length;

/** $1 per million tokens in, $2 out: a call of USAGE costs $0.0012. */
const PRICE = { inputPerMTok: 1, outputPerMTok: 2 };
const USAGE = { input: 1_000, output: 100 };

/** Writes a wrong add() and insists it is done: its tests fail every round. */
const WRONG: Worker = (turn) =>
  turn === 0
    ? {
        ...use('write_file', { path: 'src/add.js', content: 'exports.add = (a, b) => a * b;\n' }),
        usage: USAGE,
      }
    : { text: 'Done: add() multiplies.', usage: USAGE };

/** Fixes add() and says so. */
const RIGHT: Worker = (turn) =>
  turn === 0
    ? use('write_file', { path: 'src/add.js', content: FIXED_ADD })
    : { text: 'Fixed add().' };

/** RIGHT, held back until `open` is called. */
function gatedRight(): { open: () => void; worker: Worker } {
  let open = () => {};
  const gate = new Promise<void>((resolve) => (open = resolve));
  return {
    open: () => open(),
    worker: async (turn, request) => {
      await gate;
      return RIGHT(turn, request);
    },
  };
}

/** Keeps working slowly without ever finishing (until it is stopped). */
const SLOW: Worker = () => ({ ...use('report_progress', { note: 'thinking' }), delayMs: 300 });

/** Processes (other than this test's) that carry one of the ids in their environment. */
function processesOf(ids: string[]): number[] {
  return liveProcesses(({ pid }) => {
    try {
      const environment = readFileSync(`/proc/${pid}/environ`, 'latin1');
      return ids.some((id) => environment.includes(`DELEGATE_TASK_ID=${id}\0`));
    } catch {
      return false;
    }
  });
}

const it = taskTest.extend(
  'startWith',
  ({ world, provider, server }) =>
    async (
      workers: Record<string, Worker>,
      { profiles, ...config }: Record<string, unknown> = {},
      env: Record<string, string> = {},
    ): Promise<ServerHandle> => {
      const fake = await provider.start({
        respond: (request) => {
          const worker = workers[request.body?.model as string];
          if (!worker) throw new Error(`no worker for model ${request.body?.model}`);
          return worker(turnOf(request), request);
        },
      });
      // With a budget, cloud profiles with a price: every call costs what its usage says.
      const cost = config.budget ? { price: PRICE } : { local: true };
      const profile = (model: string) => ({
        format: 'openai',
        baseUrl: fake.openaiBaseUrl,
        model,
        ...cost,
      });
      world.writeConfig({
        profiles: {
          ...Object.fromEntries(Object.keys(workers).map((name) => [name, profile(name)])),
          ...(profiles as object | undefined),
        },
        ...config,
      });
      return server.start({ ...world.env, DELEGATE_QUESTION_TIMEOUT_S: '60', ...env });
    },
);

describe('attempts: several workers race on one task', () => {
  it('only one worker passes: it wins, its code is on delegate/<id>, a question reaches the supervisor tagged, and no loser leaves a process or worktree', async ({
    startWith,
    world,
    provider,
  }) => {
    const right = gatedRight();
    const handle = await startWith({
      wrong: WRONG,
      asker: (turn) =>
        turn === 0 ? use('ask_supervisor', { question: 'Numbers only?' }) : SLOW(turn, undefined!),
      // The passing worker starts once the question was answered.
      right: right.worker,
    });
    const started = await handle.callText('task_start', {
      task: 'Fix add() so the test passes',
      test_command: 'node test.js',
      attempts: 3,
      attempt_profiles: ['wrong', 'asker', 'right'],
    });
    expect(started.isError, started.text).toBe(false);
    const id = taskIdOf(started.text);
    const ids = [1, 2, 3].map((n) => `${id}a${n}`);
    expect(started.text).toContain(
      `3 attempts (first_pass), each in its own worktree: ${ids[0]} wrong, ${ids[1]} asker, ${ids[2]} right`,
    );
    expect(started.text).toContain('preflight: node test.js → exit 1');

    // One task for the supervisor: the attempts are not listed on their own.
    const asking = await pollTaskStatus(handle, id, /needs_input/);
    expect(asking).toBe(
      `${id} needs_input: "[attempt ${ids[1]} · asker] Numbers only?" → task_answer`,
    );
    const listed = (await handle.callText('task_status', {})).text.split('\n');
    expect(listed.filter((line) => line.startsWith(id))).toEqual([asking]);
    // The verbose audit shows each attempt's own line. The passing attempt's worker marks itself
    // running when its process starts, which on a loaded machine can come after the question.
    const progress = await pollTool(
      handle,
      'task_progress',
      { task_id: id },
      new RegExp(`\n  ${ids[2]} running `),
    );
    expect(progress).toContain(
      `attempts (first_pass; the winner's work lands on branch delegate/${id}):`,
    );
    expect(progress).toMatch(
      new RegExp(`\n  ${ids[1]} needs_input: "Numbers only\\?" .* · asker\n`),
    );
    expect(progress).toMatch(new RegExp(`\n  ${ids[2]} running .* · right\n`));
    const answered = await handle.callText('task_answer', { task_id: id, answer: 'Yes.' });
    expect(answered.text).toBe(`Answered ${ids[1]}; it resumes now.`);
    await waitFor(() =>
      provider.started!.requests.some(
        (request) =>
          request.body?.model === 'asker' && JSON.stringify(request.body).includes('Yes.'),
      ),
    );
    expect(await pollTaskStatus(handle, id, /running/)).toMatch(/3 attempts: /);
    right.open();

    const done = await pollTaskStatus(
      handle,
      id,
      new RegExp(`^${id} (done|failed|cancelled|lost|timeout)`),
      60_000,
    );
    expect(done).toMatch(new RegExp(`^${id} done passed · 1 file `));
    const result = (await handle.callText('task_result', { task_id: id })).text;
    expect(result).toContain(`${id} done — verdict: passed`);
    expect(result).toContain('test command: node test.js → exit 0');
    expect(result).toMatch(
      new RegExp(`attempts \\(3, [^\\n]*\\n  ${ids[2]} right: done passed · \\$0\\.00 — won`),
    );
    expect(result).toContain(`${ids[1]} asker: cancelled · $0.00 — stopped: ${ids[2]} won first`);
    // The wrong worker either failed its rounds already or was still in them.
    expect(result).toMatch(
      new RegExp(
        `${ids[0]} wrong: (done failed · \\$0\\.00 — its tests failed|cancelled · \\$0\\.00 — stopped: ${ids[2]} won first) · patch `,
      ),
    );
    expect(result).toMatch(new RegExp(`git -C .* merge --no-ff .?delegate/${id}\\b`));

    // The winner's code is on the task's branch; the checkout is untouched.
    expect(git(world.project, 'show', `delegate/${id}:src/add.js`)).toBe(FIXED_ADD.trim());
    expect(readFileSync(join(world.project, 'src/add.js'), 'utf8')).toBe(
      BROKEN_ADD_PROJECT['src/add.js'],
    );
    // No loser survives: no process, worktree or branch; the winner's worktree stays for review.
    await waitFor(() => processesOf(ids).length === 0);
    const worktrees = git(world.project, 'worktree', 'list', '--porcelain');
    expect(worktrees.match(/^worktree /gm)).toHaveLength(2);
    expect(worktrees).toMatch(new RegExp(`^branch refs/heads/delegate/${id}$`, 'm'));
    expect(git(world.project, 'branch', '--list', '--format=%(refname:short)', 'delegate/*')).toBe(
      `delegate/${id}`,
    );
    // The losers' patches are kept.
    const loserPatch = /patch (\S+patch\.diff)/.exec(result.split(`${ids[0]} wrong`)[1]!)?.[1];
    expect(loserPatch && readFileSync(loserPatch, 'utf8')).toContain('a * b');

    const cleaned = await handle.callText('task_cleanup', { task_id: id });
    expect(cleaned.text).toMatch(new RegExp(`^${id}: cleaned up`));
    for (const each of [id, ...ids])
      expect(existsSync(join(world.dataHome, 'jobs', each))).toBe(false);
    expect(
      git(world.project, 'worktree', 'list', '--porcelain').match(/^worktree /gm),
    ).toHaveLength(1);
  });

  it('no attempt passes: the task ends with the best ranked attempt and says none qualified; each attempt had its share of the budget; the monitor pushes the task alone', async ({
    startWith,
    world,
    cli,
  }) => {
    const watcher = cli.start(['watch']);
    const handle = await startWith(
      {
        wrong: WRONG,
        idle: (turn) => ({
          text: turn === 0 ? 'Nothing to change.' : 'Still nothing.',
          usage: USAGE,
        }),
      },
      { tasks: { fixRounds: 1 }, budget: { perTaskUsd: 2 } },
    );
    const started = await handle.callText('task_start', {
      task: 'Fix add()',
      test_command: 'node test.js',
      attempt_profiles: ['wrong', 'idle'],
      budget_usd: 0.5,
      wait_s: 60,
    });
    const id = taskIdOf(started.text);
    expect(started.text).toContain(`${id} done — verdict: failed`);
    expect(started.text).toContain('error: no attempt qualified (2 attempts: 2 failed)');
    // Both failed their tests: the one that changed something ranks first, over the cheaper.
    expect(started.text).toContain(
      `attempts (2, the result above is the first line's):\n  ${id}a1 wrong: done failed · $0.0036 — best ranked (did not qualify)\n  ${id}a2 idle: done failed · $0.0024 — its tests failed\n`,
    );
    expect(started.text).toContain('files changed (1): M src/add.js');
    for (const n of [1, 2]) {
      const attempt = JSON.parse(
        readFileSync(join(world.dataHome, 'jobs', `${id}a${n}`, 'job.json'), 'utf8'),
      ) as { budgetUsd: number; attemptOf: string };
      expect(attempt).toMatchObject({ budgetUsd: 0.25, attemptOf: id });
    }
    await waitFor(() => processesOf([`${id}a1`, `${id}a2`]).length === 0);
    // At $0.0012 a call: wrong made 3 (write, answer, answer after its fix round), idle 2. The
    // task's cost is theirs together, and `usage` shows the attempts as the ledger has them.
    expect(started.text).toContain('cost: $0.006');
    const usage = (await handle.callText('usage', { period: 'today' })).text;
    expect(usage).toContain('- raced as attempts: 1 task, $0.006');
    // The session is told of the task's end once, never of an attempt's.
    await waitFor(() => watcher.lines().some((line) => line.includes(id)));
    expect(watcher.lines().filter((line) => line.includes(id))).toHaveLength(1);
    expect(watcher.lines().join('\n')).not.toContain(`${id}a`);
    expect(usage).toContain(`  ${id}: ${id}a1 wrong $0.0036, ${id}a2 idle $0.0024`);
  });

  it('a cancel stops every attempt and leaves nothing running', async ({ startWith, world }) => {
    const handle = await startWith({ a: SLOW, b: SLOW });
    const started = await handle.callText('task_start', {
      task: 'Think',
      test_command: 'node test.js',
      attempts: 2,
      attempt_profiles: ['a', 'b'],
    });
    const id = taskIdOf(started.text);
    const ids = [`${id}a1`, `${id}a2`];
    await pollTaskStatus(handle, id, /running step [1-9]/);
    // Both run on the server's task host (no process carries their ids: their work is JavaScript).
    const inHost = (each: string) => existsSync(join(world.dataHome, 'jobs', each, 'hosted'));
    expect(ids.filter(inHost)).toEqual(ids);
    const cancelled = await handle.callText('task_cancel', { task_id: id });
    expect(cancelled.text).toMatch(new RegExp(`^${id} cancelled: cancelled by the supervisor`));
    expect(ids.filter(inHost)).toEqual([]);
    expect(processesOf(ids)).toEqual([]);
    const result = (await handle.callText('task_result', { task_id: id })).text;
    expect(result).toContain(`${ids[0]} a: cancelled`);
    expect(result).toContain(`${ids[1]} b: cancelled`);
    expect(git(world.project, 'branch', '--list', 'delegate/*')).toBe('');
  });

  it('the host of the attempts dies: each is found lost on the next look, and the task ends lost', async ({
    startWith,
    world,
  }) => {
    const handle = await startWith({ doomed: SLOW, other: SLOW });
    const started = await handle.callText('task_start', {
      task: 'Fix add()',
      test_command: 'node test.js',
      attempt_profiles: ['doomed', 'other'],
    });
    const id = taskIdOf(started.text);
    await pollTaskStatus(handle, id, /running step [1-9]/);
    const read = (each: string) =>
      JSON.parse(readFileSync(join(world.dataHome, 'jobs', each, 'job.json'), 'utf8')) as {
        worker: { pid: number };
      };
    const host = read(`${id}a1`).worker.pid;
    expect(read(`${id}a2`).worker.pid).toBe(host);
    process.kill(-host, 'SIGKILL');
    const ended = await pollTaskStatus(handle, id, new RegExp(`^${id} (done|failed|lost)`));
    expect(ended).toMatch(new RegExp(`^${id} lost: no attempt qualified`));
    expect(ended).toContain(`Its error: the worker process (pid ${host}) died`);
    // Both died with the host; which one is shown as best ranked is a tie it breaks either way.
    const result = (await handle.callText('task_result', { task_id: id })).text;
    for (const attempt of [`${id}a1 doomed`, `${id}a2 other`]) {
      expect(result).toContain(`${attempt}: lost · $0.00 — `);
    }
    expect(result).toContain('— best ranked (did not qualify)');
    expect(result).toContain(
      `— lost: the worker process (pid ${host}) died; its work was salvaged`,
    );
  });

  it('the winner’s worker killed while it settles the task: the next look finishes the settle and nothing is lost', async ({
    startWith,
    world,
  }) => {
    const handle = await startWith({ slow: SLOW, right: RIGHT });
    const started = await handle.callText('task_start', {
      task: 'Fix add()',
      test_command: 'node test.js',
      attempt_profiles: ['slow', 'right'],
    });
    const id = taskIdOf(started.text);
    const read = (each: string) =>
      JSON.parse(readFileSync(join(world.dataHome, 'jobs', each, 'job.json'), 'utf8')) as {
        state: string;
        worker?: { pid: number };
      };
    // The moment the winner has ended its own attempt, before its settle has ended the task.
    await waitFor(() => read(`${id}a2`).state === 'done', 30_000, 2);
    const taskStateAtKill = read(id).state;
    process.kill(-read(`${id}a2`).worker!.pid, 'SIGKILL');
    expect(taskStateAtKill).not.toMatch(/done|failed|cancelled/);
    const done = await pollTaskStatus(handle, id, new RegExp(`^${id} (done|failed|cancelled)`));
    expect(done).toMatch(new RegExp(`^${id} done passed`));
    const result = (await handle.callText('task_result', { task_id: id })).text;
    expect(result).toContain(`${id}a2 right: done passed · $0.00 — won`);
    // The slow attempt ran on the same host: stopped by the settle, or killed with the host.
    expect(result).toMatch(new RegExp(`${id}a1 slow: (cancelled|lost)`));
    expect(git(world.project, 'show', `delegate/${id}:src/add.js`)).toBe(FIXED_ADD.trim());
    await waitFor(() => processesOf([`${id}a1`, `${id}a2`]).length === 0);
    expect(
      git(world.project, 'worktree', 'list', '--porcelain').match(/^worktree /gm),
    ).toHaveLength(2);
  });

  it('attempts whose task file is gone (a start that crashed) are listed on their own, and can be cancelled and cleaned up', async ({
    startWith,
    world,
  }) => {
    const handle = await startWith({ a: SLOW, b: SLOW });
    const id = taskIdOf(
      (
        await handle.callText('task_start', {
          task: 'Think',
          test_command: 'node test.js',
          attempt_profiles: ['a', 'b'],
        })
      ).text,
    );
    await pollTaskStatus(handle, id, /running step [1-9]/);
    rmSync(join(world.dataHome, 'jobs', id), { recursive: true, force: true });
    const listed = (await handle.callText('task_status', {})).text;
    expect(listed).toMatch(new RegExp(`^${id}a1 running`, 'm'));
    expect(listed).toMatch(new RegExp(`^${id}a2 running`, 'm'));
    for (const each of [`${id}a1`, `${id}a2`]) {
      expect((await handle.callText('task_cancel', { task_id: each })).text).toMatch(
        new RegExp(`^${each} cancelled`),
      );
      expect((await handle.callText('task_cleanup', { task_id: each })).text).toMatch(
        new RegExp(`^${each}: cleaned up`),
      );
    }
    expect(processesOf([`${id}a1`, `${id}a2`])).toEqual([]);
    expect(
      git(world.project, 'worktree', 'list', '--porcelain').match(/^worktree /gm),
    ).toHaveLength(1);
  });

  it('money adds up in a race: what the stopped attempt was billed is in the task’s cost and in the ledger alike', async ({
    startWith,
    world,
  }) => {
    const handle = await startWith(
      {
        // Billed calls, one every 100 ms, until it is stopped.
        busy: () => ({ ...use('report_progress', { note: 'busy' }), delayMs: 100, usage: USAGE }),
        right: async (turn, request) => {
          await new Promise((resolve) => setTimeout(resolve, 1_000));
          return { ...(await RIGHT(turn, request)), usage: USAGE };
        },
      },
      { budget: { perTaskUsd: 2 } },
    );
    const started = await handle.callText('task_start', {
      task: 'Fix add()',
      test_command: 'node test.js',
      attempt_profiles: ['busy', 'right'],
      wait_s: 60,
    });
    const id = taskIdOf(started.text);
    expect(started.text).toContain(`${id} done — verdict: passed`);
    // It was billed for some calls before it was stopped.
    expect(started.text).toMatch(new RegExp(`${id}a1 busy: cancelled · \\$0\\.(?!00 )\\d{2,4} `));
    const total = Number(/\ncost: \$(\d+\.\d+)/.exec(started.text)?.[1]);
    const billed = readLedger(world.dataHome)
      .filter((record) => record.attemptOf === id)
      .reduce((sum, record) => sum + record.costUsd, 0);
    expect(total).toBeCloseTo(billed, 6);
    const usage = (await handle.callText('usage', { period: 'today' })).text;
    expect(usage).toContain(`- raced as attempts: 1 task, ${formatUsd(total)}`);
  });

  it('a tiny budget is split over the attempts, and the refusal says so', async ({ startWith }) => {
    const handle = await startWith({ a: RIGHT, b: RIGHT }, { budget: { perTaskUsd: 2 } });
    const started = await handle.callText('task_start', {
      task: 'Fix add()',
      test_command: 'node test.js',
      attempt_profiles: ['a', 'b'],
      budget_usd: 0.002,
      wait_s: 60,
    });
    expect(started.text).toContain('budget reached: the task spent $0.00 of its $0.001 cap');
    expect(started.text).toContain("each one's cap is an equal share of budget_usd");
  });

  it('best_review without a test command: every attempt runs to its end and the one the reviewer passes wins', async ({
    startWith,
  }) => {
    const reviewed: string[] = [];
    const handle = await startWith(
      {
        good: RIGHT,
        bad: WRONG,
        rev: (_turn, request) => {
          const diff = JSON.stringify(request.body);
          reviewed.push(diff);
          return diff.includes('a + b')
            ? { text: 'VERDICT: pass\n- add() adds: met (src/add.js:1)' }
            : { text: 'VERDICT: fail\n- add() adds: not met, it multiplies (src/add.js:1)' };
        },
      },
      { tasks: { reviewProfile: 'rev' } },
    );
    const started = await handle.callText('task_start', {
      task: 'Fix add()',
      definition_of_done: 'add(a, b) returns the sum',
      attempt_profiles: ['bad', 'good'],
      wait_s: 60,
    });
    const id = taskIdOf(started.text);
    expect(started.text).toContain(`${id} done — verdict: unverified`);
    expect(started.text).toContain('— pass:');
    expect(started.text).toContain(`${id}a2 good: done unverified · review pass · $0.00 — won`);
    expect(started.text).toContain(
      `${id}a1 bad: done unverified · review fail · $0.00 — review fail`,
    );
    // Both attempts were reviewed: best_review waits for every attempt.
    expect(reviewed.length).toBe(2);
  });

  it('a CLI engine takes part like an API worker: the CLI attempt passes first and wins', async ({
    startWith,
    world,
  }) => {
    // A stand-in `claude` that fixes add() and reports it the way Claude Code's stream-json does.
    const bin = join(world.root, 'bin');
    mkdirSync(bin);
    writeFileSync(
      join(bin, 'claude'),
      [
        '#!/bin/sh',
        "echo 'exports.add = (a, b) => a + b;' > src/add.js",
        'printf \'{"type":"result","result":"fixed","total_cost_usd":0.25}\\n\' ',
        '',
      ].join('\n'),
      { mode: 0o755 },
    );
    const handle = await startWith(
      { slow: SLOW },
      { sandbox: 'off', profiles: { cc: { format: 'claude-cli', model: 'sonnet' } } },
      { PATH: `${bin}:${world.env.PATH}` },
    );
    const started = await handle.callText('task_start', {
      task: 'Fix add()',
      test_command: 'node test.js',
      attempt_profiles: ['slow', 'cc'],
      wait_s: 60,
    });
    const id = taskIdOf(started.text);
    expect(started.text).toContain(`${id} done — verdict: passed`);
    expect(started.text).toContain(`${id}a2 cc: done passed · $0.25 — won`);
    expect(started.text).toContain(`${id}a1 slow: cancelled`);
    expect(git(world.project, 'show', `delegate/${id}:src/add.js`)).toBe(FIXED_ADD.trim());
    const usage = (await handle.callText('usage', { period: 'today' })).text;
    // The API attempt's calls (if it made any before it was stopped) are listed beside it.
    expect(usage).toMatch(new RegExp(`\\n  ${id}: .*${id}a2 cc \\$0\\.25`));
  });

  it.for([1, 2])(
    'a task cancelled while its preflight runs stays cancelled: no worker starts afterwards (%i attempt(s))',
    async (attempts, { startWith, world, provider }) => {
      const handle = await startWith({ a: RIGHT, b: RIGHT });
      const starting = handle.callText('task_start', {
        task: 'Fix add()',
        test_command: 'sleep 2; node test.js',
        ...(attempts > 1 ? { attempt_profiles: ['a', 'b'] } : { profile: 'a' }),
      });
      const jobs = join(world.dataHome, 'jobs');
      // The task's own job.json appears once every attempt is placed, before the preflight.
      const placed = () =>
        existsSync(jobs)
          ? readdirSync(jobs).find(
              (id) => id.length === 8 && existsSync(join(jobs, id, 'job.json')),
            )
          : undefined;
      await waitFor(() => placed() !== undefined);
      const id = placed()!;
      const cancelled = await handle.callText('task_cancel', { task_id: id });
      expect(cancelled.text).toMatch(new RegExp(`^${id} cancelled`));
      // The server stays up and the start returns.
      const startReply = await starting;
      expect(startReply.isError, startReply.text).toBe(false);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect((await handle.callText('task_status', { task_ids: [id] })).text).toMatch(
        new RegExp(`^${id} cancelled`),
      );
      expect(provider.started!.requests).toHaveLength(0);
      const ids = attempts > 1 ? [`${id}a1`, `${id}a2`] : [id];
      expect(processesOf(ids)).toEqual([]);
    },
  );

  it.for([
    [{ attempts: 2 }, 'Several attempts need a way to pick the winner'],
    [{ attempts: 2, test_command: 'node test.js', isolation: 'none' }, 'each need a worktree'],
    [
      { attempts: 3, attempt_profiles: ['w', 'w'], test_command: 'node test.js' },
      'attempt_profiles names 2 profiles for 3 attempts',
    ],
    [{ attempts: 2, attempt_profiles: ['w', 'nope'], test_command: 'node test.js' }, 'nope'],
    [{ attempts: 6, test_command: 'node test.js' }, 'attempts'],
  ] as const)(
    'a start it cannot run is refused before anything is made: %j',
    async ([args, message], { startWith, world }) => {
      const handle = await startWith({ w: RIGHT });
      const refused = await handle.callText('task_start', { task: 'x', ...args });
      expect(refused.isError, refused.text).toBe(true);
      expect(refused.text).toContain(message);
      const jobs = join(world.dataHome, 'jobs');
      expect(existsSync(jobs) ? readdirSync(jobs) : []).toEqual([]);
      expect(git(world.project, 'branch', '--list', 'delegate/*')).toBe('');
      expect(
        git(world.project, 'worktree', 'list', '--porcelain').match(/^worktree /gm),
      ).toHaveLength(1);
    },
  );
});
