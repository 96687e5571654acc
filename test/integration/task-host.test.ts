import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { type FakeReply, type RecordedRequest } from '../helpers/fake-provider.ts';
import { PLUGIN_ROOT, type ServerHandle } from '../helpers/mcp-server.ts';
import { environmentValue, processesWithEnv } from '../helpers/claude-processes.ts';
import { killQuietly, liveProcesses } from '../helpers/processes.ts';
import { taskTest } from '../helpers/task-world.ts';
import type { TempEnv } from '../helpers/temp-env.ts';
import { pollTaskStatus, taskIdOf, waitFor } from '../helpers/wait.ts';

/**
 * The task hosts of this data home (none carries a task's id: a cancel must never find one). A
 * child the host is starting shows the host's command line and environment until its exec: it
 * is no host of its own (a second host would be the server's child, not a host's).
 */
function hostsOf(dataHome: string): number[] {
  const found = processesWithEnv(`DELEGATE_HOME=${dataHome}`, 'task-worker.mjs --host');
  return found.filter((pid) => !found.includes(parentOf(pid)));
}

/** A process's parent pid (/proc/<pid>/stat); 0 once it is gone. */
function parentOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return 0;
  }
}

interface Job {
  workdir?: string;
  worker?: { pid: number; startTime: string; hosted?: boolean };
}
const jobOf = (world: TempEnv, id: string) =>
  JSON.parse(readFileSync(join(world.dataHome, 'jobs', id, 'job.json'), 'utf8')) as Job;

const isAlive = (pid: number) => liveProcesses((facts) => facts.pid === pid).length > 0;

/** A `sleep` of the task is running (found by the task's id in its environment). */
const isSleeping = (id: string) => processesWithEnv(`DELEGATE_TASK_ID=${id}`, 'sleep').length > 0;

/** The conversation so far, as text: what a responder keys its reply on. */
const said = (request: RecordedRequest) => JSON.stringify(request.body.messages);
const hasToolResult = (request: RecordedRequest) => said(request).includes('tool_call_id');

const it = taskTest.extend(
  'startWith',
  ({ world, provider, server }) =>
    async (
      respond: (request: RecordedRequest) => FakeReply | Promise<FakeReply>,
    ): Promise<ServerHandle> => {
      const fake = await provider.start({ respond });
      world.writeConfig({
        profiles: {
          w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'worker-model', local: true },
        },
      });
      return server.start(world.env);
    },
);

const done: FakeReply = { text: 'done' };
const sleepLong: FakeReply = { toolUses: [{ name: 'run_bash', input: { command: 'sleep 60' } }] };

describe('task hosts: the tasks of a server share one worker process', () => {
  it('every task of a session runs on one host; it carries no task id, and goes with its log once its server and tasks are gone', async ({
    startWith,
    world,
  }) => {
    const handle = await startWith(() => done);
    const first = taskIdOf((await handle.callText('task_start', { task: 'first' })).text);
    const second = taskIdOf((await handle.callText('task_start', { task: 'second' })).text);
    await pollTaskStatus(handle, first, / done /);
    await pollTaskStatus(handle, second, / done /);
    const [one, two] = [jobOf(world, first).worker!, jobOf(world, second).worker!];
    expect(one.hosted).toBe(true);
    expect(two.pid).toBe(one.pid);
    expect(hostsOf(world.dataHome)).toEqual([one.pid]);
    // No cancel's scan for a task's id can find it.
    expect(environmentValue(one.pid, 'DELEGATE_TASK_ID')).toBeUndefined();
    // Waiting for the next start.
    expect(isAlive(one.pid)).toBe(true);
    // Each task leaves the host once its end is recorded and its attempts settled.
    await waitFor(() => !existsSync(join(world.dataHome, 'jobs', first, 'hosted')));
    await handle.close();
    await waitFor(() => !isAlive(one.pid));
    expect(readdirSync(join(world.dataHome, 'hosts'))).toEqual([]);
  });

  it('a cancel stops one task and every command of it; the host and its other task run on', async ({
    startWith,
    world,
  }) => {
    const handle = await startWith((request) =>
      hasToolResult(request) ? done : said(request).includes('sleeper') ? sleepLong : done,
    );
    const first = taskIdOf((await handle.callText('task_start', { task: 'sleeper one' })).text);
    const second = taskIdOf((await handle.callText('task_start', { task: 'sleeper two' })).text);
    await waitFor(() => isSleeping(first) && isSleeping(second), 20_000);
    const host = jobOf(world, first).worker!.pid;
    expect(jobOf(world, second).worker!.pid).toBe(host);

    expect((await handle.callText('task_cancel', { task_id: first })).text).toContain('cancelled');
    expect(isSleeping(first)).toBe(false);
    expect(processesWithEnv(`DELEGATE_TASK_ID=${first}`)).toEqual([]);
    expect(isAlive(host)).toBe(true);
    expect(isSleeping(second)).toBe(true);
    expect((await handle.callText('task_status', { task_ids: [first] })).text).toMatch(
      new RegExp(`^${first} cancelled`),
    );
    expect((await handle.callText('task_status', { task_ids: [second] })).text).toMatch(
      new RegExp(`^${second} running`),
    );
    // The host still takes tasks, and runs them.
    const third = taskIdOf((await handle.callText('task_start', { task: 'quick' })).text);
    expect(await pollTaskStatus(handle, third, /done|failed|lost/)).toMatch(/ done /);
    expect(jobOf(world, third).worker!.pid).toBe(host);
    await handle.callText('task_cancel', { task_id: second });
    expect(isSleeping(second)).toBe(false);
  });

  it('the host killed: each of its tasks is found lost on the next look, its work salvaged', async ({
    startWith,
    world,
  }) => {
    const handle = await startWith((request) => {
      if (hasToolResult(request)) return { kind: 'hang' };
      const name = /writer (\w+)/.exec(said(request))?.[1] ?? 'x';
      return {
        toolUses: [{ name: 'write_file', input: { path: `${name}.txt`, content: `${name}\n` } }],
      };
    });
    const ids: string[] = [];
    for (const name of ['alpha', 'beta']) {
      ids.push(taskIdOf((await handle.callText('task_start', { task: `writer ${name}` })).text));
    }
    // Each has written its file, and waits on its model again.
    await waitFor(() =>
      ids.every((id, index) =>
        existsSync(join(jobOf(world, id).workdir!, `${['alpha', 'beta'][index]}.txt`)),
      ),
    );
    const host = jobOf(world, ids[0]!).worker!.pid;
    killQuietly(-host);
    await waitFor(() => !isAlive(host));
    for (const [index, id] of ids.entries()) {
      const status = (await handle.callText('task_status', { task_ids: [id] })).text;
      expect(status).toMatch(new RegExp(`^${id} lost: the worker process \\(pid ${host}\\) died`));
      const name = ['alpha', 'beta'][index];
      expect((await handle.callText('task_result', { task_id: id })).text).toContain(
        `files changed (1): A ${name}.txt`,
      );
    }
  });

  it('its server killed: the host runs its waiting task to the end, then exits', async ({
    startWith,
    world,
  }) => {
    let answer: (reply: FakeReply) => void = () => undefined;
    const answered = new Promise<FakeReply>((resolve) => (answer = resolve));
    const handle = await startWith(() => answered);
    const id = taskIdOf((await handle.callText('task_start', { task: 'slow model' })).text);
    await waitFor(() => jobOf(world, id).worker !== undefined);
    const host = jobOf(world, id).worker!.pid;
    killQuietly(handle.pid!);
    answer(done);
    await waitFor(() => !isAlive(host), 20_000);
    const result = JSON.parse(
      readFileSync(join(world.dataHome, 'jobs', id, 'result.json'), 'utf8'),
    ) as { state: string };
    expect(result.state).toBe('done');
    expect(readdirSync(join(world.dataHome, 'hosts'))).toEqual([]);
  });

  it('a start refused once its host was loading (a workdir outside the project), or failing its preflight, leaves no host', async ({
    startWith,
    world,
  }) => {
    const handle = await startWith(() => done);
    const refused = await handle.callText('task_start', { task: 'first', workdir: '..' });
    expect(refused.isError).toBe(true);
    await waitFor(() => hostsOf(world.dataHome).length === 0);
    const failed = await handle.callText('task_start', {
      task: 'second',
      test_command: 'no-such-runner --all',
    });
    expect(failed.text).toMatch(/failed/);
    await waitFor(() => hostsOf(world.dataHome).length === 0);
    // The next start loads one again, and runs on it.
    const id = taskIdOf((await handle.callText('task_start', { task: 'third' })).text);
    expect(await pollTaskStatus(handle, id, /done|failed|lost/)).toMatch(/ done /);
    expect(jobOf(world, id).worker?.hosted).toBe(true);
  });

  it('SIGTERM to the host: every task stops, the host exits, and each is found lost with its work salvaged', async ({
    startWith,
    world,
  }) => {
    const handle = await startWith((request) =>
      hasToolResult(request)
        ? { kind: 'hang' }
        : { toolUses: [{ name: 'write_file', input: { path: 'made.txt', content: 'made\n' } }] },
    );
    const ids: string[] = [];
    for (const name of ['one', 'two']) {
      ids.push(taskIdOf((await handle.callText('task_start', { task: `writer ${name}` })).text));
    }
    await waitFor(() => ids.every((id) => existsSync(join(jobOf(world, id).workdir!, 'made.txt'))));
    const host = jobOf(world, ids[0]!).worker!.pid;
    process.kill(host, 'SIGTERM');
    await waitFor(() => !isAlive(host));
    for (const id of ids) {
      expect((await handle.callText('task_status', { task_ids: [id] })).text).toMatch(
        new RegExp(`^${id} lost: the worker process \\(pid ${host}\\) died`),
      );
      expect((await handle.callText('task_result', { task_id: id })).text).toContain(
        'files changed (1): A made.txt',
      );
    }
  });

  it('a stop asked before the host heard of the task: the host never starts it, and lets it go', async ({
    world,
  }) => {
    const id = 't_stopped1';
    const folder = join(world.dataHome, 'jobs', id);
    mkdirSync(folder, { recursive: true });
    const job = {
      id,
      state: 'queued',
      project: world.project,
      task: 'never run',
      createdAt: new Date().toISOString(),
      workdir: world.project,
      step: 0,
      maxTurns: 10,
      costUsd: 0,
      filesTouched: [],
    };
    writeFileSync(join(folder, 'job.json'), JSON.stringify(job));
    // As the server leaves them: the task recorded in the host; then a stop came first.
    writeFileSync(join(folder, 'hosted'), '');
    writeFileSync(join(folder, 'stop'), '');
    const log = join(world.root, 'host.log');
    const host = spawn(
      process.execPath,
      [join(PLUGIN_ROOT, 'dist', 'task-worker.mjs'), '--host', log],
      {
        env: { ...world.env, DELEGATE_HOME: world.dataHome },
        stdio: ['pipe', 'ignore', 'ignore'],
      },
    );
    const exited = new Promise<number | null>((resolve) => host.once('exit', resolve));
    host.stdin.end(`go ${id} {}\n`);
    expect(await exited).toBe(0);
    expect(existsSync(join(folder, 'hosted'))).toBe(false);
    expect(JSON.parse(readFileSync(join(folder, 'job.json'), 'utf8'))).toEqual(job);
    expect(existsSync(log)).toBe(false);
  });
});
