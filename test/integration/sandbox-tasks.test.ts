import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { byAssistantTurn, type FakeReply } from '../helpers/fake-provider.ts';
import { git } from '../helpers/git-project.ts';
import type { ServerHandle } from '../helpers/mcp-server.ts';
import { taskTest } from '../helpers/task-world.ts';
import type { TempEnv } from '../helpers/temp-env.ts';
import { pollTaskStatus, taskIdOf } from '../helpers/wait.ts';

/** Points the sandbox at a bubblewrap that is not there: the library's own check then fails. */
const NO_BWRAP = { DELEGATE_BWRAP_PATH_FOR_TEST: '/nonexistent/bwrap' };

const bash = (command: string): FakeReply => ({
  toolUses: [{ name: 'run_bash', input: { command } }],
});

/** A worker that fixes add() from the shell and tries one write outside the worktree. */
function fixingSteps(outside: string): FakeReply[] {
  return [
    bash(`sed -i 's/a - b/a + b/' src/add.js && node test.js`),
    bash(`echo pwn > ${outside}; echo "outside exit $?"`),
    { text: 'Fixed add() with sed; node test.js passes.' },
  ];
}

const it = taskTest.extend(
  'startWith',
  ({ world, provider, server }) =>
    async (
      steps: FakeReply[],
      config: Record<string, unknown>,
      env: Record<string, string> = {},
    ): Promise<ServerHandle> => {
      const fake = await provider.start({ respond: byAssistantTurn(steps) });
      world.writeConfig({
        ...config,
        profiles: {
          w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'worker-model', local: true },
        },
      });
      return server.start({ ...world.env, ...env });
    },
);

const jobOf = (world: TempEnv, id: string) =>
  JSON.parse(readFileSync(join(world.dataHome, 'jobs', id, 'job.json'), 'utf8'));

describe.runIf(process.platform === 'linux')('tasks and the OS sandbox', () => {
  it('auto with the sandbox available: the work lands in the worktree, the test passes, nothing leaks', async ({
    startWith,
    world,
    provider,
  }) => {
    const outside = join(world.root, 'leak.txt');
    const handle = await startWith(fixingSteps(outside), {
      sandbox: 'auto',
    });
    const started = await handle.callText('task_start', {
      task: 'Fix add()',
      test_command: 'node test.js',
    });
    expect(started.isError, started.text).toBe(false);
    expect(started.text).not.toContain('unsandboxed');
    const id = taskIdOf(started.text);
    const done = await pollTaskStatus(handle, id, /done|failed|lost|timeout/, 60_000);
    expect(done).toMatch(new RegExp(`^${id} done passed`));
    expect(done).not.toContain('unsandboxed');
    expect(jobOf(world, id)).toMatchObject({ sandboxed: true, verification: { exitCode: 0 } });
    expect(jobOf(world, id).sandboxNote).toBeUndefined();
    const result = await handle.callText('task_result', { task_id: id });
    expect(result.text).toContain('verdict: passed');
    expect(result.text).not.toContain('unsandboxed');
    expect(JSON.stringify(provider.started!.requests[2]!.body.messages)).toContain(
      'Read-only file system',
    );
    expect(existsSync(outside)).toBe(false);
    expect(git(world.project, 'show', `delegate/${id}:src/add.js`)).toContain('a + b');
    // The server only checked the sandbox: none of its proxies' socat bridges outlive that.
    const children = spawnSync('pgrep', ['-P', String(handle.pid)], { encoding: 'utf8' });
    const commands = children.stdout
      .split('\n')
      .filter(Boolean)
      .map((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' '));
    expect(commands.filter((command) => command.includes('socat'))).toEqual([]);
  });

  it('auto without a usable sandbox: the task runs and every line says it ran unsandboxed', async ({
    startWith,
    world,
  }) => {
    const outside = join(world.root, 'leak.txt');
    const handle = await startWith(fixingSteps(outside), {}, NO_BWRAP);
    const started = await handle.callText('task_start', {
      task: 'Fix add()',
      test_command: 'node test.js',
    });
    expect(started.isError, started.text).toBe(false);
    const id = taskIdOf(started.text);
    expect(started.text.split('\n')[0]).toMatch(/ · unsandboxed$/);
    const done = await pollTaskStatus(handle, id, /done|failed|lost|timeout/, 60_000);
    expect(done).toMatch(new RegExp(`^${id} done passed .* · unsandboxed$`));
    expect(done.length).toBeLessThanOrEqual(160);
    const job = jobOf(world, id);
    expect(job.sandboxed).toBe(false);
    expect(job.sandboxNote).toMatch(/bubblewrap \(bwrap\) not executable at \/nonexistent\/bwrap/);
    const result = await handle.callText('task_result', { task_id: id });
    expect(result.text).toMatch(
      /\nunsandboxed: the worker's commands and the test command ran without the OS sandbox \(the OS sandbox is not available here: .*Install bubblewrap, socat and ripgrep/,
    );
    // Unsandboxed, the write outside really lands: the marks are not decoration.
    expect(existsSync(outside)).toBe(true);
  });

  it('required without a usable sandbox: task_start refuses before anything is made or spent', async ({
    startWith,
    world,
    provider,
  }) => {
    const handle = await startWith([{ text: 'never' }], { sandbox: 'required' }, NO_BWRAP);
    const refused = await handle.callText('task_start', { task: 'Fix add()' });
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/^sandbox is "required" but the OS sandbox is not available here/);
    expect(refused.text).toContain('Install bubblewrap, socat and ripgrep');
    expect(refused.text).toContain('"sandbox": "auto"');
    expect(existsSync(join(world.dataHome, 'jobs'))).toBe(false);
    expect(git(world.project, 'branch', '--list', 'delegate/*')).toBe('');
    expect(provider.started!.requests).toEqual([]);
  });

  it('off is unsandboxed and says why; a project file cannot turn the sandbox off', async ({
    startWith,
    world,
    provider,
  }) => {
    const handle = await startWith([{ text: 'Nothing to do.' }], {
      sandbox: 'off',
    });
    const off = await handle.callText('task_start', { task: 'Look', wait_s: 30 });
    expect(off.text).toContain('unsandboxed: ');
    expect(off.text).toContain('sandbox is "off" in the configuration');
    world.writeConfig({
      profiles: {
        w: {
          format: 'openai',
          baseUrl: provider.started!.openaiBaseUrl,
          model: 'worker-model',
          local: true,
        },
      },
    });
    world.writeProjectFile('.claude/delegate.json', JSON.stringify({ sandbox: 'off' }));
    const tightened = await handle.callText('task_start', { task: 'Look', wait_s: 30 });
    expect(tightened.text).not.toContain('unsandboxed');
    const ids = readdirSync(join(world.dataHome, 'jobs')).filter((id) => id !== taskIdOf(off.text));
    expect(ids.map((id) => jobOf(world, id).sandboxed)).toEqual([true]);
  });

  for (const isolation of ['worktree', 'none'] as const) {
    it(`a task in a subdirectory runs commands and passes its test (required, isolation ${isolation})`, async ({
      startWith,
      world,
      provider,
    }) => {
      world.writeProjectFile(
        'pkg/test.js',
        "require('fs').readFileSync('made.txt'); console.log('ok');\n",
      );
      git(world.project, 'add', '-A');
      git(world.project, 'commit', '-qm', 'pkg');
      const handle = await startWith(
        [bash('pwd; echo made > made.txt; ls'), { text: 'Made made.txt.' }],
        { sandbox: 'required' },
      );
      const started = await handle.callText('task_start', {
        task: 'Make made.txt',
        workdir: 'pkg',
        isolation,
        test_command: 'node test.js',
      });
      expect(started.isError, started.text).toBe(false);
      const id = taskIdOf(started.text);
      const done = await pollTaskStatus(handle, id, /done|failed|lost|timeout/, 60_000);
      const outputs = JSON.stringify(provider.started!.requests.at(-1)?.body?.messages ?? []);
      expect(done, outputs).toMatch(new RegExp(`^${id} done passed`));
      expect(jobOf(world, id).sandboxed).toBe(true);
      // Before the sandbox let a worktree be written whole, bubblewrap failed every command here.
      expect(outputs).toMatch(/\/pkg\\n.*made\.txt/);
      const made =
        isolation === 'none'
          ? join(world.project, 'pkg', 'made.txt')
          : join(jobOf(world, id).worktreePath, 'pkg', 'made.txt');
      expect(existsSync(made)).toBe(true);
      expect(git(world.project, 'status', '--porcelain')).toBe(
        isolation === 'none' ? '?? pkg/made.txt' : '',
      );
    });
  }

  it('refuses an allow_hosts entry that is not a host', async ({ startWith }) => {
    const handle = await startWith([{ text: 'never' }], {});
    const refused = await handle.callText('task_start', {
      task: 'x',
      allow_hosts: ['http://example.com/path'],
    });
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/^allow_hosts: "http:\/\/example.com\/path" is not a host/);
  });
});
