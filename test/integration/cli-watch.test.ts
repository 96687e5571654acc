import { existsSync, mkdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { announcedPath } from '../../server/src/store/status-key.ts';
import type { CliProcess } from '../helpers/cli-process.ts';
import { PLUGIN_ROOT } from '../helpers/mcp-server.ts';
import { writeTask } from '../helpers/task-jobs.ts';
import { taskTest as it, type CliLauncher } from '../helpers/task-world.ts';
import type { TempEnv } from '../helpers/temp-env.ts';
import { scaledMs, settle } from '../helpers/timing.ts';
import { waitFor } from '../helpers/wait.ts';

it.override('repository', null);

/** A second project whose tasks this project's watcher must not print. */
const otherProject = (world: TempEnv) => join(world.root, 'other-project');
it.beforeEach(({ world }) => {
  mkdirSync(otherProject(world));
});

const task = (world: TempEnv, fields: Parameters<typeof writeTask>[2], project = world.project) =>
  writeTask(world.dataHome, project, fields);
const ended = () => ({ endedAt: new Date().toISOString() });

const watch = (cli: CliLauncher): CliProcess => cli.start(['watch']);

/** How long after its start a Node process is still settling (its first idle-time GC). */
const START_UP_MS = 12_000;

/** The watcher has read the jobs once (its record exists or it had nothing to record). */
async function settled(watcher: CliProcess, ms = 1_000): Promise<void> {
  await settle(ms);
  expect(watcher.stderr()).toBe('');
}

describe('delegate watch (the monitor)', () => {
  it('prints each transition of this project once: a question, then the result; nothing else', async ({
    world,
    cli,
  }) => {
    await task(world, { id: 't_ours01', state: 'running', step: 1 });
    await task(world, { id: 't_other1', state: 'running' }, otherProject(world));
    const watcher = watch(cli);
    await settled(watcher);
    expect(watcher.lines()).toEqual([]);

    await task(world, {
      id: 't_ours01',
      state: 'needs_input',
      question: 'Which database?\nPostgres?',
    });
    await waitFor(() => watcher.lines().length === 1, 5_000);
    // Answered: running again, which is no news.
    await task(world, { id: 't_ours01', state: 'running', step: 3, activity: 'editing db.ts' });
    await settle(500);
    await task(
      world,
      { id: 't_other1', state: 'done', verdict: 'passed', ...ended() },
      otherProject(world),
    );
    await task(world, { id: 't_cancel', state: 'cancelled', ...ended() });
    await task(world, {
      id: 't_ours01',
      state: 'done',
      verdict: 'passed',
      review: { verdict: 'pass', notes: '', profile: 'code', turns: 2 },
      costUsd: 0.01234,
      filesTouched: ['db.ts', 'db.test.ts'],
      ...ended(),
    });
    await waitFor(() => watcher.lines().length === 2, 5_000);
    await task(world, {
      id: 't_fail01',
      state: 'failed',
      error: 'budget reached: $1.00',
      ...ended(),
    });
    await waitFor(() => watcher.lines().length === 3, 5_000);
    await settle(1_000);
    expect(watcher.lines()).toEqual([
      '[delegate] task t_ours01 needs an answer: "Which database?\\nPostgres?" → reply with task_answer t_ours01',
      '[delegate] task t_ours01 done: verdict passed, review pass, 2 files changed, $0.0123 → review with task_result t_ours01',
      '[delegate] task t_fail01 failed: budget reached: $1.00 → task_result t_fail01',
    ]);
    expect(watcher.stderr()).toBe('');
  });

  it('prints nothing and uses almost no CPU while nothing changes', async ({ world, cli }) => {
    for (const id of ['t_idle01', 't_idle02', 't_idle03'])
      await task(world, { id, state: 'done', verdict: 'passed', ...ended() });
    await task(world, { id: 't_idle04', state: 'running', step: 4 });
    const startedAt = Date.now();
    const watcher = watch(cli);
    await waitFor(() => watcher.lines().length === 3, 5_000);
    await settled(watcher);
    // Start-up is over first: V8's memory reducer collects once, about 8 s after start (40 ms
    // of CPU here), which is not the watcher polling.
    await settle(Math.max(0, START_UP_MS - (Date.now() - startedAt)));
    const before = watcher.cpuMs();
    // At most 10 ms of CPU a second, over a window that grows with the time scale.
    const idleMs = scaledMs(4_000);
    await new Promise((resolve) => setTimeout(resolve, idleMs));
    const used = watcher.cpuMs() - before;
    console.info(`watch, idle ${idleMs} ms: ${used} ms of CPU`);
    expect(used).toBeLessThanOrEqual(idleMs / 100);
    expect(watcher.lines()).toHaveLength(3);
    // It waits on file events, not in a loop: its threads sleep.
    const state = readFileSync(`/proc/${watcher.child.pid}/stat`, 'utf8').split(') ')[1]?.[0];
    expect(state).toBe('S');
  });

  it('a restarted watcher repeats nothing and announces what happened while it was down', async ({
    world,
    cli,
  }) => {
    await task(world, { id: 't_first1', state: 'running' });
    await task(world, { id: 't_secnd1', state: 'running' });
    const first = watch(cli);
    await settled(first);
    await task(world, { id: 't_first1', state: 'done', verdict: 'unverified', ...ended() });
    await waitFor(() => first.lines().length === 1, 5_000);
    // The line goes out before the record is written (a crash in between repeats one line
    // rather than losing it), so the watcher is down once its record holds the line.
    const record = announcedPath(world.dataHome, world.project);
    await waitFor(
      () => existsSync(record) && readFileSync(record, 'utf8').includes('t_first1'),
      5_000,
    );
    await first.stop();

    await task(world, { id: 't_secnd1', state: 'needs_input', question: 'Keep the old API?' });
    const second = watch(cli);
    await waitFor(() => second.lines().length === 1, 5_000);
    await settled(second);
    expect(second.lines()).toEqual([
      '[delegate] task t_secnd1 needs an answer: "Keep the old API?" → reply with task_answer t_secnd1',
    ]);
    expect(JSON.parse(readFileSync(announcedPath(world.dataHome, world.project), 'utf8'))).toEqual({
      project: world.project,
      announced: { t_first1: 'done', t_secnd1: expect.stringMatching(/^needs_input:\d+$/) },
    });
  });

  it('two watchers on one project (two sessions) print each transition once between them', async ({
    world,
    cli,
  }) => {
    await task(world, { id: 't_twin01', state: 'running' });
    const [one, two] = [watch(cli), watch(cli)];
    await settled(one);
    for (let index = 0; index < 5; index += 1) {
      await task(world, { id: `t_twin1${index}`, state: 'done', verdict: 'passed', ...ended() });
    }
    await waitFor(() => one.lines().length + two.lines().length >= 5, 5_000);
    await settle(1_000);
    const all = [...one.lines(), ...two.lines()].sort();
    expect(all).toHaveLength(5);
    expect(new Set(all).size).toBe(5);
  });

  it("two Claude Code sessions on one project: each monitor speaks only of its own session's tasks", async ({
    world,
    cli,
    provider,
    server,
  }) => {
    const as = (session: string) => ({ ...world.env, CLAUDE_CODE_SESSION_ID: session });
    // A task started by a server under session s2 records it.
    const fake = await provider.start({ respond: () => ({ text: 'Nothing to do.' }) });
    world.writeConfig({
      profiles: { w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm', local: true } },
    });
    const handle = await server.start(as('s2'));
    const started = await handle.callText('task_start', {
      task: 'Look',
      isolation: 'none',
      wait_s: 30,
    });
    const id = /t_[a-z0-9]{6}/.exec(started.text)![0];
    const job = JSON.parse(readFileSync(join(world.dataHome, 'jobs', id, 'job.json'), 'utf8'));
    expect(job.session).toBe('s2');
    await handle.callText('task_cleanup', { task_id: id });

    await task(world, { id: 't_sess01', state: 'running', session: 's1' });
    await task(world, { id: 't_sess02', state: 'running', session: 's2' });
    const one = cli.start(['watch'], { env: as('s1') });
    const two = cli.start(['watch'], { env: as('s2') });
    await settled(one);
    await task(world, {
      id: 't_sess02',
      state: 'done',
      verdict: 'passed',
      session: 's2',
      ...ended(),
    });
    await waitFor(() => two.lines().length === 1, 5_000);
    await task(world, { id: 't_sess01', state: 'needs_input', question: 'Q?', session: 's1' });
    await task(world, { id: 't_sess03', state: 'failed', session: 's2', ...ended() });
    await waitFor(() => one.lines().length === 1 && two.lines().length === 2, 5_000);
    await settle(1_500);
    expect(one.lines()).toEqual([
      '[delegate] task t_sess01 needs an answer: "Q?" → reply with task_answer t_sess01',
    ]);
    expect(two.lines()).toEqual([
      expect.stringMatching(/^\[delegate\] task t_sess02 done/),
      expect.stringMatching(/^\[delegate\] task t_sess03 failed/),
    ]);
  });

  it('finds a dead worker itself: the task becomes lost and is announced', async ({
    world,
    cli,
  }) => {
    // A pid that cannot be alive with this start time.
    await task(world, {
      id: 't_dead01',
      state: 'running',
      worker: { pid: 999_999, startTime: '1' },
    });
    const watcher = watch(cli);
    await waitFor(() => watcher.lines().length === 1, 10_000);
    expect(watcher.lines()[0]).toMatch(
      /^\[delegate\] task t_dead01 lost: the worker process \(pid 999999\) died; its work was salvaged → task_result t_dead01$/,
    );
  });

  it('records old news silently: a task that ended hours ago is left to the session briefing', async ({
    world,
    cli,
  }) => {
    const longAgo = new Date(Date.now() - 3 * 3600_000).toISOString();
    await task(world, { id: 't_old001', state: 'done', verdict: 'passed', endedAt: longAgo });
    const watcher = watch(cli);
    await waitFor(() => existsSync(announcedPath(world.dataHome, world.project)), 5_000);
    await settled(watcher);
    expect(watcher.lines()).toEqual([]);
  });
});

describe('the monitor command (monitors/watch-tasks.sh)', () => {
  it('starts no Node process until the project has a task, then runs the watcher', async ({
    world,
    cli,
  }) => {
    const gate = cli.start([], {
      env: { ...world.env, DELEGATE_MONITOR_IDLE_S_FOR_TEST: '0.2' },
      command: ['sh', join(PLUGIN_ROOT, 'monitors', 'watch-tasks.sh')],
    });
    const commandOf = () => readlinkSync(`/proc/${gate.child.pid}/exe`);
    await settle(1_000);
    expect(commandOf()).not.toMatch(/node/);
    await task(world, { id: 't_gate01', state: 'running' });
    await waitFor(() => /node/.test(commandOf()), 5_000);
    await settled(gate);
    await task(world, { id: 't_gate01', state: 'done', verdict: 'passed', ...ended() });
    await waitFor(() => gate.lines().length === 1, 5_000);
    expect(gate.lines()[0]).toMatch(/^\[delegate\] task t_gate01 done: verdict passed/);
  });
});
