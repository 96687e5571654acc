import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { byAssistantTurn, type FakeReply, type RecordedRequest } from '../helpers/fake-provider.ts';
import type { ServerHandle } from '../helpers/mcp-server.ts';
import { killQuietly, liveProcesses } from '../helpers/processes.ts';
import { taskTest } from '../helpers/task-world.ts';
import type { TempEnv } from '../helpers/temp-env.ts';
import { taskIdOf } from '../helpers/wait.ts';
import { scaledMs } from '../helpers/timing.ts';
import { isProcessAlive } from '../../server/src/util/process-identity.ts';

function jobFiles(
  world: TempEnv,
): Array<{ id: string; worker?: { pid: number }; childPgids?: number[] }> {
  try {
    return readdirSync(join(world.dataHome, 'jobs')).map((id) =>
      JSON.parse(readFileSync(join(world.dataHome, 'jobs', id, 'job.json'), 'utf8')),
    );
  } catch {
    return [];
  }
}

/** Live processes whose command line contains `marker`. */
function processesWith(marker: string): number[] {
  return liveProcesses(({ commandLine }) => commandLine.includes(marker));
}

const it = taskTest.extend(
  'start',
  ({ world, provider, server }) =>
    async (
      steps: FakeReply[] | ((request: RecordedRequest) => FakeReply),
      pool = 2,
    ): Promise<ServerHandle> => {
      const fake = await provider.start({
        respond: Array.isArray(steps) ? byAssistantTurn(steps) : steps,
      });
      world.writeConfig({
        profiles: {
          w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm', local: true, pool },
        },
      });
      return server.start(world.env);
    },
);

// Workers and their children are killed outright before the fixture stops the servers: some
// hang on purpose, and a killed server leaves its tasks running.
it.afterEach(({ world }) => {
  for (const job of jobFiles(world))
    for (const group of [job.worker?.pid, ...(job.childPgids ?? [])])
      if (group) killQuietly(-group);
});

async function until<T>(probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + scaledMs(timeoutMs);
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('tasks survive and are never lost', () => {
  it('SIGKILL the MCP server while 10 tasks run: a new server finds all 10 and every result', async ({
    start,
    world,
    server,
  }) => {
    const first = await start(
      [
        {
          toolUses: [{ name: 'write_file', input: { path: 'out.txt', content: 'work\n' } }],
          delayMs: 1_500,
        },
        { text: 'Wrote out.txt.', delayMs: 500 },
      ],
      10,
    );
    const ids: string[] = [];
    for (let index = 0; index < 10; index += 1)
      ids.push(taskIdOf((await first.callText('task_start', { task: `task ${index}` })).text));
    process.kill(first.pid!, 'SIGKILL');
    const second = await server.start(world.env);
    const listed = (await second.callText('task_status', {})).text;
    for (const id of ids) expect(listed).toContain(id);
    await until(async () => {
      const { text } = await second.callText('task_status', { task_ids: ids });
      return text.split('\n').every((line) => / done /.test(line)) ? text : undefined;
    });
    for (const id of ids) {
      const result = await second.callText('task_result', { task_id: id });
      expect(result.text).toContain(`${id} done — verdict: unverified`);
      expect(result.text).toContain('files changed (1): A out.txt');
    }
  });

  it('SIGKILL a worker: the task is lost within one status call, its work salvaged', async ({
    start,
    world,
  }) => {
    let calls = 0;
    const handle = await start(() =>
      ++calls === 1
        ? {
            toolUses: [{ name: 'write_file', input: { path: 'half.txt', content: 'half done\n' } }],
          }
        : { kind: 'hang' },
    );
    const id = taskIdOf((await handle.callText('task_start', { task: 'long work' })).text);
    await until(() => Promise.resolve(calls >= 2 ? true : undefined));
    const worker = jobFiles(world).find((job) => job.id === id)!.worker!.pid;
    process.kill(worker, 'SIGKILL');
    // Dead as the task engine judges it (gone, or a zombie): on a loaded machine a killed
    // process can sit for a while mid-exit, its command line already empty but not yet a zombie.
    await until(() =>
      Promise.resolve(isProcessAlive({ pid: worker, startTime: '' }) ? undefined : true),
    );
    const status = (await handle.callText('task_status', { task_ids: [id] })).text;
    expect(status).toMatch(new RegExp(`^${id} lost: the worker process \\(pid ${worker}\\) died`));
    const result = await handle.callText('task_result', { task_id: id });
    expect(result.text).toContain('files changed (1): A half.txt');
  });

  it(
    'task_cancel leaves no process of the tree alive (run_bash with grandchildren), 20 trials',
    async ({ start }) => {
      const handle = await start((request) => {
        const trial = /trial (\d+)/.exec(JSON.stringify(request.body.messages))?.[1] ?? '0';
        return {
          toolUses: [
            {
              name: 'run_bash',
              input: {
                command: `sleep 30${trial.padStart(2, '0')}.${process.pid} & sleep 30${trial.padStart(2, '0')}.${process.pid} & wait`,
                timeout_s: 600,
              },
            },
          ],
        };
      });
      for (let trial = 0; trial < 20; trial += 1) {
        // Its own length: no other run on the machine sleeps as long.
        const marker = `sleep 30${String(trial).padStart(2, '0')}.${process.pid}`;
        const id = taskIdOf(
          (await handle.callText('task_start', { task: `trial ${trial}`, isolation: 'none' })).text,
        );
        await until(() => Promise.resolve(processesWith(marker).length >= 3 ? true : undefined));
        const cancelled = await handle.callText('task_cancel', { task_id: id });
        // Cancel returns once every process of the task is gone: no grace period here.
        expect(cancelled.text).toMatch(new RegExp(`^${id} cancelled`));
        expect(cancelled.text).not.toContain('Still stopping');
        expect(processesWith(marker), `trial ${trial}`).toEqual([]);
        expect(processesWith(`task-worker.mjs ${id}`), `trial ${trial}`).toEqual([]);
      }
      // Each trial starts a sandboxed worker (~0.6 s more than unsandboxed).
    },
    scaledMs(120_000),
  );
});
