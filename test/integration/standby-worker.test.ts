import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { type FakeReply } from '../helpers/fake-provider.ts';
import type { ServerHandle } from '../helpers/mcp-server.ts';
import { environmentValue, processesWithEnv } from '../helpers/claude-processes.ts';
import { killQuietly, liveProcesses } from '../helpers/processes.ts';
import { taskTest } from '../helpers/task-world.ts';
import type { TempEnv } from '../helpers/temp-env.ts';
import { pollTaskStatus, taskIdOf, waitFor } from '../helpers/wait.ts';

/** Task workers of this data home, by the id in their environment (as a cancel finds them). */
function workersOf(dataHome: string): Array<{ pid: number; id: string }> {
  return processesWithEnv(`DELEGATE_HOME=${dataHome}`, 'task-worker.mjs').flatMap((pid) => {
    const id = environmentValue(pid, 'DELEGATE_TASK_ID');
    return id ? [{ pid, id }] : [];
  });
}

/** The worker loaded for the next start: a worker whose id has no job folder. */
async function standbyOf(world: TempEnv): Promise<{ pid: number; id: string }> {
  let standby: { pid: number; id: string } | undefined;
  await waitFor(() => {
    standby = workersOf(world.dataHome).find(
      (worker) => !existsSync(join(world.dataHome, 'jobs', worker.id)),
    );
    return standby !== undefined;
  });
  return standby!;
}

const isAlive = (pid: number) => liveProcesses((facts) => facts.pid === pid).length > 0;

/** A `sleep 60` of the task is running (found by the task's id in its environment). */
const isSleeping = (id: string) => processesWithEnv(`DELEGATE_TASK_ID=${id}`, 'sleep').length > 0;

const it = taskTest.extend(
  'startWith',
  ({ world, provider, server }) =>
    async (respond: (body: string) => FakeReply): Promise<ServerHandle> => {
      const fake = await provider.start({
        respond: (request) => respond(JSON.stringify(request.body.messages)),
      });
      world.writeConfig({
        profiles: {
          w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'worker-model', local: true },
        },
      });
      return server.start(world.env);
    },
);

const done: FakeReply = { text: 'done' };

describe('the standby worker: a start after a start runs on a worker already loaded', () => {
  it('the second task gets the standby’s id and process; nothing lists it before; its log becomes the task’s', async ({
    startWith,
    world,
  }) => {
    const handle = await startWith(() => done);
    const first = taskIdOf((await handle.callText('task_start', { task: 'first' })).text);
    const standby = await standbyOf(world);
    expect(standby.id).not.toBe(first);
    // Not a task yet: no folder, no line in any listing.
    expect((await handle.callText('task_status', {})).text).not.toContain(standby.id);
    expect(readdirSync(join(world.dataHome, 'standby'))).toEqual([`${standby.id}.log`]);

    const second = taskIdOf((await handle.callText('task_start', { task: 'second' })).text);
    expect(second).toBe(standby.id);
    const job = JSON.parse(
      readFileSync(join(world.dataHome, 'jobs', second, 'job.json'), 'utf8'),
    ) as { worker: { pid: number } };
    expect(job.worker.pid).toBe(standby.pid);
    expect(await pollTaskStatus(handle, second, /done|failed|lost/)).toMatch(/ done /);
    expect(existsSync(join(world.dataHome, 'jobs', second, 'worker.log'))).toBe(true);
    expect(readdirSync(join(world.dataHome, 'standby'))).not.toContain(`${second}.log`);
    await pollTaskStatus(handle, first, / done /);
  });

  it('a cancel of a task on the standby ends its worker and every command, and the task shows cancelled', async ({
    startWith,
    world,
  }) => {
    const handle = await startWith((body) =>
      body.includes('slow one') && !body.includes('tool_call_id')
        ? { toolUses: [{ name: 'run_bash', input: { command: 'sleep 60' } }] }
        : done,
    );
    await handle.callText('task_start', { task: 'first' });
    const standby = await standbyOf(world);
    const id = taskIdOf((await handle.callText('task_start', { task: 'slow one' })).text);
    expect(id).toBe(standby.id);
    await waitFor(() => isSleeping(id));
    expect((await handle.callText('task_cancel', { task_id: id })).text).toContain('cancelled');
    expect(isAlive(standby.pid)).toBe(false);
    expect(isSleeping(id)).toBe(false);
    expect((await handle.callText('task_status', { task_ids: [id] })).text).toMatch(
      new RegExp(`^${id} cancelled`),
    );
  });

  it('an id taken meanwhile (its folder made by someone else): the start gets another id and worker, the standby goes', async ({
    startWith,
    world,
  }) => {
    const handle = await startWith(() => done);
    await handle.callText('task_start', { task: 'first' });
    const standby = await standbyOf(world);
    mkdirSync(join(world.dataHome, 'jobs', standby.id));
    const second = taskIdOf((await handle.callText('task_start', { task: 'second' })).text);
    expect(second).not.toBe(standby.id);
    expect(await pollTaskStatus(handle, second, /done|failed|lost/)).toMatch(/ done /);
    await waitFor(() => !isAlive(standby.pid));
    expect(readdirSync(join(world.dataHome, 'standby'))).not.toContain(`${standby.id}.log`);
    rmdirSync(join(world.dataHome, 'jobs', standby.id));
  });

  it('a start refused at its plan (an unknown profile) leaves no worker: not the standby it took, not a new one', async ({
    startWith,
    world,
  }) => {
    const handle = await startWith(() => done);
    const first = taskIdOf((await handle.callText('task_start', { task: 'first' })).text);
    await pollTaskStatus(handle, first, / done /);
    const standby = await standbyOf(world);
    const refused = await handle.callText('task_start', { task: 'second', profile: 'nope' });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain('nope');
    await waitFor(() => !isAlive(standby.pid));
    // Another refusal, with no standby loaded: the worker started for it goes too.
    const again = await handle.callText('task_start', { task: 'third', profile: 'nope' });
    expect(again.isError).toBe(true);
    await waitFor(() => workersOf(world.dataHome).length === 0);
    expect(readdirSync(join(world.dataHome, 'jobs'))).toEqual([first]);
    expect(readdirSync(join(world.dataHome, 'standby'))).toEqual([]);
  });

  it('the server’s end lets the standby go: on a close and on a SIGKILL, no process and no log are left', async ({
    startWith,
    world,
    server,
  }) => {
    const closed = await startWith(() => done);
    await closed.callText('task_start', { task: 'first' });
    const standby = await standbyOf(world);
    await closed.close();
    await waitFor(() => !isAlive(standby.pid));
    expect(readdirSync(join(world.dataHome, 'standby'))).toEqual([]);

    const killed = await server.start(world.env);
    await killed.callText('task_start', { task: 'first again' });
    const next = await standbyOf(world);
    killQuietly(killed.pid!);
    // Its stdin ends with its server: it goes by itself, taking its log along.
    await waitFor(() => !isAlive(next.pid));
    expect(readdirSync(join(world.dataHome, 'standby'))).toEqual([]);
    expect(readdirSync(join(world.dataHome, 'jobs'))).not.toContain(next.id);
  });
});
