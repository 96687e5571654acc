import { execFile } from 'node:child_process';
import { describe, expect } from 'vitest';
import { CLI_BUNDLE } from '../helpers/cli-process.ts';
import { byAssistantTurn } from '../helpers/fake-provider.ts';
import { BROKEN_ADD_PROJECT, FIXED_ADD, git, initRepository } from '../helpers/git-project.ts';
import { taskTest as it } from '../helpers/task-world.ts';
import type { TempEnv } from '../helpers/temp-env.ts';
import { taskIdOf } from '../helpers/wait.ts';

// The repository comes with the one test that runs a task.
it.override('repository', null);

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(world: TempEnv, ...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI_BUNDLE, ...args],
      { cwd: world.project, env: world.env, encoding: 'utf8' },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('delegate --version and --help', () => {
  it('--version and -V print the version and exit 0', async ({ world }) => {
    for (const flag of ['--version', '-V']) {
      const run = await cli(world, flag);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^delegate \d+\.\d+\.\d+\S*\n$/);
    }
  });

  it('every command listed by --help has its own --help: usage, what it does, exit 0', async ({
    world,
  }) => {
    const overview = await cli(world, '--help');
    expect(overview.code).toBe(0);
    const names = [...overview.stdout.matchAll(/^ {2}delegate ([a-z-]+)/gm)].map((m) => m[1]!);
    expect(names).toEqual(expect.arrayContaining(['run', 'tasks', 'result', 'cancel', 'cleanup']));
    for (const name of names) {
      for (const flag of ['--help', '-h']) {
        const run = await cli(world, name, flag);
        expect(run.code, `${name} ${flag}: ${run.stderr}`).toBe(0);
        expect(run.stderr).toBe('');
        expect(run.stdout).toMatch(
          new RegExp(`^Usage: delegate ${name}\\b.*\\n\\n\\S.+\\.\\n\\n\\S`),
        );
      }
    }
  });

  it('--help lists commands in the order a user needs them: setup, one-shot, tasks, the rest', async ({
    world,
  }) => {
    const overview = await cli(world, '--help');
    const names = [...overview.stdout.matchAll(/^ {2}delegate ([a-z-]+)/gm)].map((m) => m[1]!);
    expect(names.slice(0, 5)).toEqual(
      expect.arrayContaining(['doctor', 'provider-key', 'approve-project', 'statusline']),
    );
    expect(names[0]).toBe('doctor');
    const position = (name: string) => names.indexOf(name);
    for (const [before, after] of [
      ['statusline', 'run'],
      ['run', 'start'],
      ['start', 'tasks'],
      ['explore', 'tasks'],
      ['tasks', 'wait'],
      ['wait', 'result'],
      ['result', 'cancel'],
      ['cancel', 'cleanup'],
      ['cleanup', 'usage'],
      ['cleanup', 'subagent'],
      ['cleanup', 'uninstall'],
    ] as const) {
      expect(position(before), `${before} before ${after}`).toBeLessThan(position(after));
    }
  });

  it('an unknown option is one readable line and exit 2', async ({ world }) => {
    for (const name of ['run', 'tasks', 'result', 'cancel', 'cleanup', 'wait']) {
      const run = await cli(world, name, '--bogus');
      expect(run.code).toBe(2);
      expect(run.stderr).toBe(
        `delegate ${name}: unknown option --bogus (see delegate ${name} --help)\n`,
      );
    }
  });
});

describe('delegate tasks, result, cancel, cleanup', () => {
  it('tasks --json with no tasks prints []', async ({ world }) => {
    const run = await cli(world, 'tasks', '--json');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual([]);
  });

  it('start runs a task from a terminal: the same checks and text as task_start, --wait prints the result', async ({
    world,
    provider,
  }) => {
    initRepository(world.project, BROKEN_ADD_PROJECT);
    const fake = await provider.start({
      respond: byAssistantTurn([
        { toolUses: [{ name: 'write_file', input: { path: 'src/add.js', content: FIXED_ADD } }] },
        { text: 'Fixed add.' },
      ]),
    });
    world.writeConfig({
      profiles: { w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm', local: true } },
    });
    // As a terminal user in their checkout, with no Claude Code.
    const waited = await cli(world, 'start', 'Fix add()', '--test', 'node test.js', '--wait');
    expect(waited.code, waited.stderr).toBe(0);
    const id = taskIdOf(waited.stdout);
    expect(waited.stdout).toMatch(new RegExp(`^${id} done — verdict: passed`, 'm'));
    expect(waited.stdout).toContain(`when done reviewing: delegate cleanup ${id}`);
    expect(waited.stdout).not.toMatch(/task_(result|cleanup|cancel|status)\b(?! \(in Claude Code)/);
    expect(git(world.project, 'show', `delegate/${id}:src/add.js`)).toBe(FIXED_ADD.trim());

    // Without --wait: the id and the next steps at once, as delegate commands.
    // An absolute --workdir is taken as given.
    const quick = await cli(
      world,
      'start',
      'Look around',
      '--isolation',
      'none',
      '--workdir',
      world.project,
    );
    expect(quick.code, quick.stderr).toBe(0);
    const second = taskIdOf(quick.stdout);
    expect(quick.stdout).toContain('poll: delegate tasks');
    await cli(world, 'wait', second, '--timeout', '60');

    // Bad input: the flag named, exit 2, nothing started.
    const before = JSON.parse((await cli(world, 'tasks', '--json')).stdout).length;
    for (const [args, says] of [
      [['start'], 'delegate: say what the task is'],
      [['start', 'x', '--attempts', 'many'], 'delegate: --attempts: '],
      [['start', 'x', '--attempts', '9'], 'delegate: --attempts: '],
      [['start', 'x', '--budget=-1'], 'delegate: --budget: '],
      [['start', 'x', '--isolation', 'sideways'], 'delegate: --isolation: '],
      [['start', 'x', '--bogus'], 'unknown option --bogus'],
    ] as const) {
      const refused = await cli(world, ...args);
      expect(refused.code, args.join(' ')).toBe(2);
      // The first line names the flag; the usage line follows.
      expect(refused.stderr.split('\n')[0], args.join(' ')).toContain(says);
    }
    expect(JSON.parse((await cli(world, 'tasks', '--json')).stdout)).toHaveLength(before);
  });

  it('cancel, result and cleanup act on a real task and name delegate commands', async ({
    world,
    provider,
    server: servers,
  }) => {
    initRepository(world.project, BROKEN_ADD_PROJECT);
    const fake = await provider.start({ respond: () => ({ kind: 'hang' }) });
    world.writeConfig({
      profiles: { w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm', local: true } },
    });
    const server = await servers.start(world.env);
    const id = taskIdOf((await server.callText('task_start', { task: 'slow' })).text);

    const listed = await cli(world, 'tasks', '--json');
    expect(JSON.parse(listed.stdout)).toMatchObject([{ id, reviewed: false }]);
    const refused = await cli(world, 'cleanup', id);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`cancel it with delegate cancel ${id} before cleaning it up`);

    const cancelled = await cli(world, 'cancel', id);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(cancelled.stdout).toMatch(new RegExp(`^${id} cancelled: .*→ delegate result ${id}`));
    expect(cancelled.stdout).toContain(`Work salvaged; see delegate result ${id}.`);
    expect(cancelled.stdout).not.toMatch(/task_(result|cleanup|cancel|status)/);

    const text = await cli(world, 'result', id);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`when done reviewing: delegate cleanup ${id}`);
    expect(text.stdout).not.toMatch(/task_(result|cleanup|cancel|status)/);
    const json = await cli(world, 'result', id, '--json', '--patch');
    expect(JSON.parse(json.stdout)).toMatchObject({ id, state: 'cancelled', ended: true });
    expect(JSON.parse((await cli(world, 'tasks', '--json')).stdout)).toMatchObject([
      { id, reviewed: true },
    ]);

    const cleaned = await cli(world, 'cleanup', id);
    expect(cleaned.code, cleaned.stderr).toBe(0);
    expect(cleaned.stdout).toMatch(new RegExp(`^${id}: cleaned up`));
    expect(JSON.parse((await cli(world, 'tasks', '--json')).stdout)).toEqual([]);
    const gone = await cli(world, 'result', id);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('List them with delegate tasks.');
    expect((await cli(world, 'cleanup', '--all-finished')).stdout).toBe(
      'No ended tasks to clean up.\n',
    );
  });
});
