// Every shell launcher finds the plugin (or the data home) from its own real path: reached through
// a symlink, a chain of two (the second relative), or a symlinked folder, from another folder.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI_BUNDLE, startCli } from '../helpers/cli-process.ts';
import { postToolUse } from '../helpers/hook.ts';
import { PLUGIN_ROOT } from '../helpers/mcp-server.ts';
import { writeTask } from '../helpers/task-jobs.ts';
import { createTempEnv, makeLog, type TempEnv } from '../helpers/temp-env.ts';
import { scaledMs, settle } from '../helpers/timing.ts';
import { waitFor } from '../helpers/wait.ts';

let world: TempEnv;
let elsewhere: string;
beforeEach(() => {
  world = createTempEnv();
  elsewhere = join(world.root, 'elsewhere');
  mkdirSync(elsewhere);
});
afterEach(() => world.cleanup());

/** `links/one/<name>` → target (absolute); `links/two/<name>` → `../one/<name>` (relative). */
function linksTo(target: string, name: string): { direct: string; chained: string } {
  const one = join(world.root, 'links', 'one');
  const two = join(world.root, 'links', 'two');
  mkdirSync(one, { recursive: true });
  mkdirSync(two, { recursive: true });
  symlinkSync(target, join(one, name));
  symlinkSync(join('..', 'one', name), join(two, name));
  return { direct: join(one, name), chained: join(two, name) };
}

const run = (command: string, args: string[], input?: string, env = world.env) =>
  spawnSync(command, args, { cwd: elsewhere, env, input, encoding: 'utf8' });

describe('launchers reached through symlinks', () => {
  it('bin/delegate: a symlink, a relative chain of two, a symlinked folder and PATH', () => {
    const { direct, chained } = linksTo(join(PLUGIN_ROOT, 'bin', 'delegate'), 'delegate');
    const folder = join(world.root, 'bin-link');
    symlinkSync(join(PLUGIN_ROOT, 'bin'), folder);
    for (const launcher of [direct, chained, join(folder, 'delegate')]) {
      const version = run(launcher, ['--version']);
      expect(version.stderr, launcher).toBe('');
      expect(version.stdout).toMatch(/^delegate \d+\.\d+\.\d+/);
    }
    const path = `${join(world.root, 'links', 'two')}:${world.env.PATH}`;
    const help = run('delegate', ['--help'], undefined, { ...world.env, PATH: path });
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toContain('Usage:\n  delegate doctor');
  });

  it('hooks/post-tool-use.sh: a chained link still reaches the output guard', () => {
    const { chained } = linksTo(join(PLUGIN_ROOT, 'hooks', 'post-tool-use.sh'), 'post.sh');
    const output = { stdout: makeLog(100 * 1024), stderr: '', interrupted: false, isImage: false };
    const input = postToolUse('Bash', { command: 'npm test' }, output, world.project);
    const hook = run('sh', [chained], input);
    expect(hook.stderr).toBe('');
    expect(JSON.parse(hook.stdout).hookSpecificOutput.hookEventName).toBe('PostToolUse');
  });

  it('monitors/watch-tasks.sh: a chained link becomes delegate watch', async () => {
    await writeTask(world.dataHome, world.project, { id: 't_link01', state: 'running' });
    const { chained } = linksTo(join(PLUGIN_ROOT, 'monitors', 'watch-tasks.sh'), 'watch.sh');
    const env = { ...world.env, DELEGATE_MONITOR_IDLE_S_FOR_TEST: '0.1' };
    const watcher = startCli([], { env, cwd: elsewhere, command: ['sh', chained] });
    try {
      await waitFor(() => /\bwatch\b/.test(commandLineOf(watcher.child.pid!)), 5_000);
      // Its first look at the tasks records t_link01 as running: no line for that.
      await settle(1_000);
      await writeTask(world.dataHome, world.project, {
        id: 't_link01',
        state: 'done',
        verdict: 'passed',
        endedAt: new Date().toISOString(),
      });
      await waitFor(() => watcher.lines().length === 1, scaledMs(5_000));
      expect(watcher.stderr()).toBe('');
      expect(watcher.lines()[0]).toContain('task t_link01 done');
    } finally {
      await watcher.stop();
    }
  });

  it('the status line reader, copied to the data home, through a chained link', async () => {
    const install = spawnSync(process.execPath, [CLI_BUNDLE, 'statusline', 'install'], {
      cwd: world.project,
      env: world.env,
      encoding: 'utf8',
    });
    expect(install.status, install.stderr).toBe(0);
    await writeTask(world.dataHome, world.project, { id: 't_line01', state: 'running', step: 2 });
    const reader = join(world.dataHome, 'bin', 'delegate-statusline.sh');
    const { chained } = linksTo(reader, 'statusline.sh');
    const input = JSON.stringify({ workspace: { project_dir: world.project } });
    const line = run('sh', [chained], input);
    expect(line.stderr).toBe('');
    expect(line.stdout).toBe('delegate: t_line01 · step 2/40 · running\n');
  });
});

/** What a process runs, from /proc (Linux): the monitor's shell replaced by node … watch. */
function commandLineOf(pid: number): string {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
}
