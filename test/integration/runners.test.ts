/**
 * Tasks on an SSH runner: a real sshd on 127.0.0.1 (test/helpers/sshd.ts), logging in as the
 * account `delegate-runner` where the test-deps script made it, so the runner's processes and
 * files are told apart from ours by their owner.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { byAssistantTurn, type FakeReply } from '../helpers/fake-provider.ts';
import { git } from '../helpers/git-project.ts';
import type { ServerHandle } from '../helpers/mcp-server.ts';
import { startSshd, type SshdFixture } from '../helpers/sshd.ts';
import { taskTest } from '../helpers/task-world.ts';
import type { TempEnv } from '../helpers/temp-env.ts';
import { pollTaskStatus, taskIdOf, waitFor } from '../helpers/wait.ts';

const bash = (command: string, delayMs?: number): FakeReply => ({
  toolUses: [{ name: 'run_bash', input: { command } }],
  ...(delayMs ? { delayMs } : {}),
});

let sshd: SshdFixture;

const runnerConfig = (overrides: Record<string, unknown> = {}) => ({
  type: 'ssh',
  host: sshd.host,
  port: sshd.port,
  user: sshd.user,
  identityFile: sshd.identityFile,
  knownHostsFile: sshd.knownHostsFile,
  workdir: sshd.workdir,
  ...overrides,
});

const it = taskTest.extend(
  'startWith',
  ({ world, provider, server }) =>
    async (
      steps: FakeReply[],
      config: Record<string, unknown> = {},
      env: Record<string, string> = {},
    ): Promise<ServerHandle> => {
      const fake = await provider.start({ respond: byAssistantTurn(steps) });
      world.writeConfig({
        runners: { build: runnerConfig() },
        ...config,
        profiles: {
          w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'worker-model', local: true },
        },
      });
      return server.start({ ...world.env, DELEGATE_RUNNER_RETRY_MS: '50', ...env });
    },
);

const jobOf = (world: TempEnv, id: string) =>
  JSON.parse(readFileSync(join(world.dataHome, 'jobs', id, 'job.json'), 'utf8'));

const ENDED = /done|failed|lost|timeout|cancelled/;

describe.runIf(process.platform === 'linux')('tasks on an SSH runner', () => {
  beforeAll(async () => {
    sshd = await startSshd();
  });
  afterAll(async () => {
    await sshd?.stop();
  });

  it('runs its commands and its test in the runner’s checkout, and its work lands on the local branch', async ({
    startWith,
    world,
    provider,
  }) => {
    writeFileSync(join(world.project, '.gitignore'), 'deps/\n');
    git(world.project, 'add', '.gitignore');
    git(world.project, 'commit', '-qm', 'ignore deps');
    const handle = await startWith([
      bash(
        `sed -i 's/a - b/a + b/' src/add.js && mkdir -p deps && echo dep > deps/lib.txt && ` +
          `(id -un; pwd) > where.txt && cat where.txt && node test.js`,
      ),
      bash(`echo leak > "$HOME/leak.txt"; echo "home exit $?"`),
      { text: 'Fixed add() on the runner; node test.js passes.' },
    ]);
    const started = await handle.callText('task_start', {
      task: 'Fix add()',
      test_command: 'id -un; pwd; node test.js',
      runner: 'build',
    });
    expect(started.isError, started.text).toBe(false);
    const id = taskIdOf(started.text);
    const taskDir = `${sshd.workdir}/${id}`;
    expect(started.text).toContain(
      `commands and tests run on runner build (127.0.0.1) in ${taskDir}`,
    );
    const done = await pollTaskStatus(handle, id, ENDED, 90_000);
    expect(done).toMatch(new RegExp(`^${id} done passed`));

    const job = jobOf(world, id);
    // The result salvages the work to the branch first.
    const result = await handle.callText('task_result', { task_id: id });
    expect(result.text).toContain('verdict: passed');
    expect(job.runner).toMatchObject({ name: 'build', taskDir, sandboxed: true });
    // The test command ran there, as the runner's user, in the task's checkout.
    expect(job.verification.exitCode).toBe(0);
    expect(job.verification.outputTail).toContain(`${sshd.user}\n${taskDir}/tree\nok`);
    expect(job.preflight.outputTail).toContain(`${taskDir}/tree`);
    // The worker's command too: its output reached the model, and its files came back.
    const firstResult = JSON.stringify(provider.started!.requests[1]!.body.messages);
    expect(firstResult).toContain(`${sshd.user}\\n${taskDir}/tree`);
    expect(git(world.project, 'show', `delegate/${id}:src/add.js`)).toContain('a + b');
    expect(git(world.project, 'show', `delegate/${id}:where.txt`).trim()).toBe(
      `${sshd.user}\n${taskDir}/tree`,
    );
    // Ignored files (dependencies, build output) stay on the runner.
    expect(git(world.project, 'ls-tree', '-r', '--name-only', `delegate/${id}`)).not.toContain(
      'deps/',
    );
    if (sshd.separateUser) {
      expect(readFileSync(`${taskDir}/tree/deps/lib.txt`, 'utf8')).toBe('dep\n');
    }
    // In the runner's sandbox, nothing but the checkout and tmp is writable.
    const secondResult = JSON.stringify(provider.started!.requests[2]!.body.messages);
    expect(secondResult).toMatch(/Read-only file system[\s\S]*home exit 1/);

    // task_cleanup removes the runner's folder too.
    const cleaned = await handle.callText('task_cleanup', { task_id: id, keep_branch: true });
    expect(cleaned.text).toContain('its folder on runner build removed');
    expect(existsSync(taskDir)).toBe(false);
  });

  it('cancel leaves no process on the runner', async ({ startWith }) => {
    const handle = await startWith([
      bash('sleep 300 & (sleep 301; echo never) ; echo unreachable'),
      { text: 'never' },
    ]);
    const started = await handle.callText('task_start', { task: 'Wait', runner: 'build' });
    expect(started.isError, started.text).toBe(false);
    const id = taskIdOf(started.text);
    await waitFor(() => sshd.runnerProcesses().some((line) => line.endsWith('sleep 301')), 30_000);
    expect(sshd.runnerProcesses().some((line) => line.endsWith('sleep 300'))).toBe(true);
    const cancelled = await handle.callText('task_cancel', { task_id: id });
    expect(cancelled.isError, cancelled.text).toBe(false);
    await pollTaskStatus(handle, id, /cancelled/, 30_000);
    await waitFor(() => sshd.runnerProcesses().length === 0, 10_000);
  });

  it('refuses a runner whose host key is unknown before anything is made or run', async ({
    startWith,
    world,
  }) => {
    const emptyKnownHosts = join(world.root, 'known_hosts');
    writeFileSync(emptyKnownHosts, '');
    const before = readdirSync(sshd.workdir);
    const handle = await startWith([{ text: 'never' }], {
      runners: { build: runnerConfig({ knownHostsFile: emptyKnownHosts }) },
    });
    const started = await handle.callText('task_start', { task: 'Anything', runner: 'build' });
    expect(started.isError).toBe(true);
    expect(started.text).toContain(
      `the host key of 127.0.0.1:${sshd.port} is not in ${emptyKnownHosts}`,
    );
    expect(started.text).toContain(sshd.hostKeyFingerprint);
    expect(started.text).toContain(`ssh-keyscan -p ${sshd.port} 127.0.0.1 >> ${emptyKnownHosts}`);
    const jobs = join(world.dataHome, 'jobs');
    expect(existsSync(jobs) ? readdirSync(jobs) : []).toEqual([]);
    expect(readdirSync(sshd.workdir)).toEqual(before);
    expect(git(world.project, 'branch', '--list', 'delegate/*')).toBe('');
  });

  it('a task outlives its local server killed mid-task and loses nothing', async ({
    startWith,
    server,
    world,
  }) => {
    const handle = await startWith([
      bash(`sed -i 's/a - b/a + b/' src/add.js && sleep 3 && echo slept`),
      { text: 'Fixed.' },
    ]);
    const started = await handle.callText('task_start', {
      task: 'Fix add()',
      test_command: 'node test.js',
      runner: 'build',
    });
    const id = taskIdOf(started.text);
    await waitFor(() => sshd.runnerProcesses().some((line) => line.endsWith('sleep 3')), 30_000);
    process.kill(handle.pid!, 'SIGKILL');
    const again = await server.start({ ...world.env, DELEGATE_RUNNER_RETRY_MS: '50' });
    const done = await pollTaskStatus(again, id, ENDED, 60_000);
    await again.callText('task_result', { task_id: id });
    expect(done).toMatch(new RegExp(`^${id} done passed`));
    expect(git(world.project, 'show', `delegate/${id}:src/add.js`)).toContain('a + b');
  });

  it('a project file cannot define a runner; an unknown runner says where runners are defined', async ({
    startWith,
    world,
  }) => {
    world.writeProjectFile(
      '.claude/delegate.json',
      JSON.stringify({ runners: { evil: runnerConfig() } }),
    );
    const handle = await startWith([{ text: 'never' }], { runners: {} });
    const started = await handle.callText('task_start', { task: 'Anything', runner: 'evil' });
    expect(started.isError).toBe(true);
    expect(started.text).toContain('no runner "evil"');
    expect(started.text).toContain('a project file may not define one');
    const providers = await handle.callText('providers', {});
    expect(providers.text).toContain('defines runners (evil)');
  });
});
