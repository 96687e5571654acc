import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import type { CliProcess } from '../helpers/cli-process.ts';
import { writeTask } from '../helpers/task-jobs.ts';
import { taskTest as it, type CliLauncher } from '../helpers/task-world.ts';
import type { TempEnv } from '../helpers/temp-env.ts';
import { waitFor } from '../helpers/wait.ts';
import { scaledMs, settle } from '../helpers/timing.ts';

it.override('repository', null);

const task = (world: TempEnv, fields: Parameters<typeof writeTask>[2], project = world.project) =>
  writeTask(world.dataHome, project, fields);
const ended = () => ({ endedAt: new Date().toISOString() });

const wait = (cli: CliLauncher, args: string[]): CliProcess => cli.start(['wait', ...args]);

describe('delegate wait', () => {
  it('blocks until every task ends, one line each as it ends; exit 0 when all are done', async ({
    world,
    cli,
  }) => {
    await task(world, { id: 't_wait01', state: 'running', step: 1 });
    await task(world, { id: 't_wait02', state: 'needs_input', question: 'Which?' });
    const waiter = wait(cli, ['t_wait01', 't_wait02']);
    await settle(800);
    expect(waiter.lines()).toEqual([]);
    await task(world, { id: 't_wait02', state: 'done', verdict: 'unverified', ...ended() });
    await waitFor(() => waiter.lines().length === 1, 5_000);
    await task(world, {
      id: 't_wait01',
      state: 'done',
      verdict: 'passed',
      costUsd: 0.5,
      ...ended(),
    });
    expect(await waiter.exited).toBe(0);
    expect(waiter.lines()).toEqual([
      't_wait02 done unverified · 0 files · $0.00 → delegate result t_wait02',
      't_wait01 done passed · 0 files · $0.50 → delegate result t_wait01',
    ]);
  });

  it.for([
    ['failed', { state: 'failed', error: 'budget reached' }],
    ['timed out', { state: 'timeout', error: 'hard timeout' }],
    ['done, tests failing', { state: 'done', verdict: 'failed' }],
    ['cancelled', { state: 'cancelled' }],
  ] as const)('exits 1 when a task %s', async ([, outcome], { world, cli }) => {
    await task(world, { id: 't_good01', state: 'done', verdict: 'passed', ...ended() });
    await task(world, { id: 't_bad001', ...outcome, ...ended() });
    const waiter = wait(cli, ['t_good01', 't_bad001']);
    expect(await waiter.exited).toBe(1);
    expect(waiter.lines()).toHaveLength(2);
  });

  it('finds a dead worker itself (lost): exit 1', async ({ world, cli }) => {
    await task(world, {
      id: 't_lost01',
      state: 'running',
      worker: { pid: 999_999, startTime: '1' },
    });
    const waiter = wait(cli, ['t_lost01', '--json']);
    expect(await waiter.exited).toBe(1);
    expect(JSON.parse(waiter.lines()[0]!)).toMatchObject({
      id: 't_lost01',
      state: 'lost',
      ended: true,
      error: expect.stringContaining('died'),
    });
  });

  it('exits 3 when --timeout runs out first, naming what has not ended', async ({ world, cli }) => {
    await task(world, { id: 't_slow01', state: 'running', step: 7, activity: 'thinking' });
    await task(world, { id: 't_fast01', state: 'done', verdict: 'passed', ...ended() });
    const started = Date.now();
    const waiter = wait(cli, ['t_fast01', 't_slow01', '--timeout', '1']);
    expect(await waiter.exited).toBe(3);
    expect(Date.now() - started).toBeLessThan(scaledMs(5_000));
    expect(waiter.lines()[0]).toMatch(/^t_fast01 done passed/);
    expect(waiter.lines()[1]).toMatch(
      /^t_slow01 running step 7\/40 · thinking · .* \(not ended within --timeout\)$/,
    );
  });

  it('--json: one object per line, as each task ends', async ({ world, cli }) => {
    await task(world, {
      id: 't_json01',
      state: 'done',
      verdict: 'passed',
      review: { verdict: 'fail', notes: 'n', profile: 'p', turns: 1 },
      costUsd: 0.25,
      filesTouched: ['a.ts', 'b.ts'],
      ...ended(),
    });
    const waiter = wait(cli, ['--json', 't_json01']);
    expect(await waiter.exited).toBe(0);
    expect(waiter.lines().map((line) => JSON.parse(line))).toEqual([
      {
        id: 't_json01',
        state: 'done',
        ended: true,
        verdict: 'passed',
        review: 'fail',
        costUsd: 0.25,
        filesTouched: 2,
      },
    ]);
  });

  it('exits 2 at once for an unknown or malformed id, and for usage mistakes', async ({
    world,
    cli,
  }) => {
    await task(world, { id: 't_real01', state: 'running' });
    const unknown = wait(cli, ['t_real01', 't_nope01', 'bogus']);
    expect(await unknown.exited).toBe(2);
    expect(unknown.stderr()).toBe(
      'delegate: No task t_nope01 (it may have been cleaned up). List them with delegate tasks.\n' +
        'delegate: "bogus" is not a task id (they look like t_ab12cd).\n',
    );
    for (const args of [[], ['t_real01', '--timeout', 'soon'], ['t_real01', '--forever']]) {
      const result = wait(cli, args);
      expect(await result.exited, args.join(' ')).toBe(2);
      expect(result.stderr()).toMatch(
        /^delegate(: .*\nUsage: delegate wait <task id>…| wait: .* \(see delegate wait --help\)\n$)/,
      );
    }
  });
});

describe('delegate tasks', () => {
  it("lists this project's tasks, newest first, one line each (not other projects')", async ({
    world,
  }) => {
    const other = join(world.root, 'other');
    mkdirSync(other);
    await task(world, {
      id: 't_list01',
      state: 'done',
      verdict: 'passed',
      createdAt: '2026-01-01T00:00:00Z',
      reviewedAt: '2026-01-02T00:00:00Z',
      ...ended(),
    });
    await task(world, {
      id: 't_list02',
      state: 'running',
      step: 2,
      createdAt: '2026-01-03T00:00:00Z',
    });
    await task(world, { id: 't_else01', state: 'running' }, other);
    const result = spawnSync(process.execPath, [join('plugin', 'dist', 'cli.mjs'), 'tasks'], {
      cwd: join(import.meta.dirname, '..', '..'),
      env: world.env,
      encoding: 'utf8',
    });
    expect(result.status, result.stderr).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^t_list02 running step 2\/40 · starting · /);
    expect(lines[1]).toBe(
      't_list01 done passed · 0 files · $0.00 → delegate result t_list01 · reviewed',
    );
  });
});
