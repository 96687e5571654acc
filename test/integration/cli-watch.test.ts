import { existsSync, mkdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { announcedPath } from '../../server/src/store/status-key.ts';
import { startCli, type CliProcess } from '../helpers/cli-process.ts';
import { REPO_ROOT } from '../helpers/mcp-server.ts';
import { writeTask } from '../helpers/task-jobs.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';
import { scaledMs, settle } from '../helpers/timing.ts';
import { waitFor } from '../helpers/wait.ts';

let world: TempEnv;
let other: string;
let running: CliProcess[] = [];
beforeEach(() => {
  world = createTempEnv();
  other = join(world.root, 'other-project');
  mkdirSync(other);
});
afterEach(async () => {
  await Promise.all(running.map((process) => process.stop()));
  running = [];
  world.cleanup();
});

const task = (fields: Parameters<typeof writeTask>[2], project = world.project) =>
  writeTask(world.dataHome, project, fields);
const ended = () => ({ endedAt: new Date().toISOString() });

function watch(env: Record<string, string> = {}): CliProcess {
  const watcher = startCli(['watch'], { env: { ...world.env, ...env }, cwd: world.project });
  running.push(watcher);
  return watcher;
}

/** The watcher has read the jobs once (its record exists or it had nothing to record). */
async function settled(watcher: CliProcess, ms = 1_000): Promise<void> {
  await settle(ms);
  expect(watcher.stderr()).toBe('');
}

describe('delegate watch (the monitor)', () => {
  it('prints each transition of this project once: a question, then the result; nothing else', async () => {
    await task({ id: 't_ours01', state: 'running', step: 1 });
    await task({ id: 't_other1', state: 'running' }, other);
    const watcher = watch();
    await settled(watcher);
    expect(watcher.lines()).toEqual([]);

    await task({ id: 't_ours01', state: 'needs_input', question: 'Which database?\nPostgres?' });
    await waitFor(() => watcher.lines().length === 1, 5_000);
    // Answered: running again, which is no news.
    await task({ id: 't_ours01', state: 'running', step: 3, activity: 'editing db.ts' });
    await settle(500);
    await task({ id: 't_other1', state: 'done', verdict: 'passed', ...ended() }, other);
    await task({ id: 't_cancel', state: 'cancelled', ...ended() });
    await task({
      id: 't_ours01',
      state: 'done',
      verdict: 'passed',
      review: { verdict: 'pass', notes: '', profile: 'code', turns: 2 },
      costUsd: 0.01234,
      filesTouched: ['db.ts', 'db.test.ts'],
      ...ended(),
    });
    await waitFor(() => watcher.lines().length === 2, 5_000);
    await task({ id: 't_fail01', state: 'failed', error: 'budget reached: $1.00', ...ended() });
    await waitFor(() => watcher.lines().length === 3, 5_000);
    await settle(1_000);
    expect(watcher.lines()).toEqual([
      '[delegate] task t_ours01 needs an answer: "Which database? Postgres?" → reply with task_answer t_ours01',
      '[delegate] task t_ours01 done: verdict passed, review pass, 2 files changed, $0.0123 → review with task_result t_ours01',
      '[delegate] task t_fail01 failed: budget reached: $1.00 → task_result t_fail01',
    ]);
    expect(watcher.stderr()).toBe('');
  });

  it('prints nothing and uses almost no CPU while nothing changes', async () => {
    for (const id of ['t_idle01', 't_idle02', 't_idle03'])
      await task({ id, state: 'done', verdict: 'passed', ...ended() });
    await task({ id: 't_idle04', state: 'running', step: 4 });
    const watcher = watch();
    await waitFor(() => watcher.lines().length === 3, 5_000);
    await settled(watcher);
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

  it('a restarted watcher repeats nothing and announces what happened while it was down', async () => {
    await task({ id: 't_first1', state: 'running' });
    await task({ id: 't_secnd1', state: 'running' });
    const first = watch();
    await settled(first);
    await task({ id: 't_first1', state: 'done', verdict: 'unverified', ...ended() });
    await waitFor(() => first.lines().length === 1, 5_000);
    // The line goes out before the record is written (a crash in between repeats one line
    // rather than losing it), so the watcher is down once its record holds the line.
    const record = announcedPath(world.dataHome, world.project);
    await waitFor(
      () => existsSync(record) && readFileSync(record, 'utf8').includes('t_first1'),
      5_000,
    );
    await first.stop();

    await task({ id: 't_secnd1', state: 'needs_input', question: 'Keep the old API?' });
    const second = watch();
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

  it('two watchers on one project (two sessions) print each transition once between them', async () => {
    await task({ id: 't_twin01', state: 'running' });
    const [one, two] = [watch(), watch()];
    await settled(one);
    for (let index = 0; index < 5; index += 1) {
      await task({ id: `t_twin1${index}`, state: 'done', verdict: 'passed', ...ended() });
    }
    await waitFor(() => one.lines().length + two.lines().length >= 5, 5_000);
    await settle(1_000);
    const all = [...one.lines(), ...two.lines()].sort();
    expect(all).toHaveLength(5);
    expect(new Set(all).size).toBe(5);
  });

  it('finds a dead worker itself: the task becomes lost and is announced', async () => {
    // A pid that cannot be alive with this start time.
    await task({ id: 't_dead01', state: 'running', worker: { pid: 999_999, startTime: '1' } });
    const watcher = watch();
    await waitFor(() => watcher.lines().length === 1, 10_000);
    expect(watcher.lines()[0]).toMatch(
      /^\[delegate\] task t_dead01 lost: the worker process \(pid 999999\) died; its work was salvaged → task_result t_dead01$/,
    );
  });

  it('records old news silently: a task that ended hours ago is left to the session briefing', async () => {
    const longAgo = new Date(Date.now() - 3 * 3600_000).toISOString();
    await task({ id: 't_old001', state: 'done', verdict: 'passed', endedAt: longAgo });
    const watcher = watch();
    await waitFor(() => existsSync(announcedPath(world.dataHome, world.project)), 5_000);
    await settled(watcher);
    expect(watcher.lines()).toEqual([]);
  });
});

describe('the monitor command (monitors/watch-tasks.sh)', () => {
  it('starts no Node process until the project has a task, then runs the watcher', async () => {
    const gate = startCli([], {
      env: { ...world.env, DELEGATE_MONITOR_IDLE_S_FOR_TEST: '0.2' },
      cwd: world.project,
      command: ['sh', join(REPO_ROOT, 'monitors', 'watch-tasks.sh')],
    });
    running.push(gate);
    const commandOf = () => readlinkSync(`/proc/${gate.child.pid}/exe`);
    await settle(1_000);
    expect(commandOf()).not.toMatch(/node/);
    await task({ id: 't_gate01', state: 'running' });
    await waitFor(() => /node/.test(commandOf()), 5_000);
    await settled(gate);
    await task({ id: 't_gate01', state: 'done', verdict: 'passed', ...ended() });
    await waitFor(() => gate.lines().length === 1, 5_000);
    expect(gate.lines()[0]).toMatch(/^\[delegate\] task t_gate01 done: verdict passed/);
  });
});
