// A reader that closes the pipe early (`delegate tasks | head -1`): the CLI ends quietly, with no
// `write EPIPE` stack, whatever it still had to print.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { CLI_BUNDLE } from '../helpers/cli-process.ts';
import { jobOf } from '../helpers/task-jobs.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';

let world: TempEnv;
beforeEach(() => {
  world = createTempEnv();
  // Enough ended tasks that their lines (about 77 bytes each) overflow a pipe's buffer (64 KB).
  for (let index = 0; index < 1000; index += 1) {
    const id = `t_pipe${String(index).padStart(5, '0')}`;
    const job = jobOf(world.project, {
      id,
      state: 'done',
      verdict: 'passed',
      endedAt: new Date().toISOString(),
    });
    mkdirSync(join(world.dataHome, 'jobs', id), { recursive: true });
    writeFileSync(join(world.dataHome, 'jobs', id, 'job.json'), JSON.stringify(job));
  }
});
afterEach(() => world.cleanup());

it('delegate tasks | head -1: one line, no error, exit 0', () => {
  const pipeline = spawnSync(
    'sh',
    ['-c', '{ "$0" "$1" tasks; echo "cli exit: $?" >&2; } | head -1', process.execPath, CLI_BUNDLE],
    { cwd: world.project, env: world.env, encoding: 'utf8' },
  );
  expect(pipeline.stderr).toBe('cli exit: 0\n');
  expect(pipeline.stdout).toMatch(/^t_pipe\d{5} done passed [^\n]*\n$/);
});

it('a stdout pipe destroyed after the first chunk: the CLI exits 0 and writes nothing to stderr', async () => {
  const child = spawn(process.execPath, [CLI_BUNDLE, 'tasks'], {
    cwd: world.project,
    env: world.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdout.once('data', () => child.stdout.destroy());
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  expect(stderr).toBe('');
  expect(code).toBe(0);
});
