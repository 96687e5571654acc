import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import type { RecordedRequest } from '../helpers/fake-provider.ts';
import { taskTest } from '../helpers/task-world.ts';
import { pollTaskStatus, taskIdOf, waitFor } from '../helpers/wait.ts';

/**
 * A process of an ended task that is still exiting (its worker settling attempts or closing its
 * sandbox after writing the task's end): it carries the task's id, as every process of a task
 * does, and keeps creating entries in the task's folder the way job.json's atomic writes do,
 * until it exits after `exitAfterMs` (0: never, until killed).
 */
function lingerIn(folder: string, id: string, exitAfterMs: number): ChildProcess {
  const script = `
    const { writeFileSync, renameSync } = require('node:fs');
    const [folder, exitAfterMs] = [process.argv[1], Number(process.argv[2])];
    const started = Date.now();
    let n = 0;
    const loop = () => {
      if (exitAfterMs > 0 && Date.now() - started > exitAfterMs) process.exit(0);
      try {
        writeFileSync(folder + '/job.json.' + n + '.tmp', '{}');
        renameSync(folder + '/job.json.' + n + '.tmp', folder + '/left-' + (n % 40));
      } catch {}
      n += 1;
      setImmediate(loop);
    };
    process.stdout.write('writing\\n');
    loop();
  `;
  return spawn(process.execPath, ['-e', script, folder, String(exitAfterMs)], {
    env: { PATH: process.env.PATH, DELEGATE_TASK_ID: id },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

const it = taskTest.extend('start', ({ world, provider, server }) => async () => {
  const fake = await provider.start({
    respond: (request: RecordedRequest) =>
      JSON.stringify(request.body.messages).includes('write it')
        ? { toolUses: [{ name: 'write_file', input: { path: 'note.txt', content: 'hi\n' } }] }
        : { text: 'Done.' },
  });
  world.writeConfig({
    profiles: { w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm', local: true } },
  });
  return server.start(world.env);
});

const cases = [
  { how: 'task_id', exitAfterMs: 700, ends: 'by itself' },
  { how: 'task_id', exitAfterMs: 0, ends: 'killed' },
  { how: 'all_finished', exitAfterMs: 0, ends: 'killed' },
  { how: 'an attempt', exitAfterMs: 0, ends: 'killed' },
] as const;

describe('task_cleanup and a process of the task still exiting', () => {
  it.for(cases)(
    '$how: the process ends $ends and the folder goes, with no error',
    async ({ how, exitAfterMs, ends }, { start, world }) => {
      const handle = await start();
      const started = await handle.callText('task_start', {
        task: 'Say done.',
        ...(how === 'an attempt' ? { attempts: 2, test_command: 'node -e 0' } : {}),
      });
      expect(started.isError, started.text).toBe(false);
      const id = taskIdOf(started.text);
      await pollTaskStatus(handle, id, / done |failed/);
      const lingering = how === 'an attempt' ? `${id}a2` : id;
      const folder = join(world.dataHome, 'jobs', lingering);
      expect(existsSync(folder), folder).toBe(true);
      const child = lingerIn(folder, lingering, exitAfterMs);
      const exited = once(child, 'exit');
      try {
        await once(child.stdout!, 'data');
        await waitFor(() => existsSync(join(folder, 'left-0')));
        const cleaned = await handle.callText(
          'task_cleanup',
          how === 'all_finished' ? { all_finished: true } : { task_id: id },
        );
        expect(cleaned.isError, cleaned.text).toBe(false);
        expect(cleaned.text).toMatch(new RegExp(`^${id}: cleaned up`));
        const [code, signal] = (await exited) as [number | null, NodeJS.Signals | null];
        expect({ code, signal }).toEqual(
          ends === 'killed' ? { code: null, signal: 'SIGKILL' } : { code: 0, signal: null },
        );
        expect(existsSync(folder), folder).toBe(false);
        expect(existsSync(join(world.dataHome, 'jobs', id))).toBe(false);
      } finally {
        child.kill('SIGKILL');
      }
    },
  );
});
