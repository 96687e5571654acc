/**
 * Tasks on an SSH runner: a real sshd on 127.0.0.1 (test/helpers/sshd.ts), logging in as the
 * account `delegate-runner` where the test-deps script made it, so the runner's processes and
 * files are told apart from ours by their owner.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { git } from '../helpers/git-project.ts';
import { runnerConfig as runnerConfigOf, startSshd, type SshdFixture } from '../helpers/sshd.ts';
import { bash, ENDED, runnerTest, WORKER_KEY } from '../helpers/runner-world.ts';
import type { TempEnv } from '../helpers/temp-env.ts';
import { pollTaskStatus, taskIdOf, waitFor } from '../helpers/wait.ts';

let sshd: SshdFixture;
const runnerConfig = (overrides: Record<string, unknown> = {}) => runnerConfigOf(sshd, overrides);
const it = runnerTest(() => sshd);

const jobOf = (world: TempEnv, id: string) =>
  JSON.parse(readFileSync(join(world.dataHome, 'jobs', id, 'job.json'), 'utf8'));

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
      bash('env; cat /proc/$PPID/environ 2>/dev/null | tr "\\0" "\\n"; echo env-done'),
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
    expect(result.text).toContain(
      `runner: the worker's commands and the test command ran on build`,
    );
    const progress = await handle.callText('task_progress', { task_id: id });
    expect(progress.text).toContain(
      `runner: build (127.0.0.1:${sshd.port}) · commands in ${taskDir}/tree · sandbox: on there`,
    );
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

    // The provider key stays here: not in the commands' environment there, not in any file there.
    const third = JSON.stringify(provider.started!.requests[3]!.body.messages.at(-1));
    expect(third).toContain('env-done');
    expect(third).not.toContain(WORKER_KEY);
    const grep = await sshd.exec(`grep -rl ${WORKER_KEY} ${taskDir} || echo none`);
    expect(grep.stdout.trim()).toBe('none');

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
    await pollTaskStatus(handle, id, ENDED, 30_000);
    await waitFor(() => sshd.runnerProcesses().length === 0, 10_000);
  });

  /** A known_hosts line for this runner's address with another key than its own. */
  const otherKeyLine = (root: string) => {
    const otherKey = join(root, 'other_host_key');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', otherKey]);
    const [type, body] = readFileSync(`${otherKey}.pub`, 'utf8').split(' ');
    return `[127.0.0.1]:${sshd.port} ${type} ${body}\n`;
  };

  it.for<[string, (root: string) => string, (file: string) => string[]]>([
    [
      'unknown',
      () => '',
      (file) => [
        `the host key of 127.0.0.1:${sshd.port} is not in ${file}`,
        `ssh-keyscan -p ${sshd.port} 127.0.0.1 >> ${file}`,
      ],
    ],
    [
      'changed',
      otherKeyLine,
      (file) => [
        `the host key of 127.0.0.1:${sshd.port} CHANGED since it was trusted in ${file}`,
        `ssh-keygen -R '[127.0.0.1]:${sshd.port}' -f ${file}`,
      ],
    ],
  ])(
    'refuses a runner whose host key is %s before anything is made or run, even while the trusted key’s connection to the same login is open',
    async ([, knownHosts, expected], { startWith, world }) => {
      const file = join(world.root, 'known_hosts_other');
      writeFileSync(file, knownHosts(world.root));
      const handle = await startWith([{ text: 'Nothing to do.' }], {
        runners: {
          build: runnerConfig(),
          // The same user@host:port: only the trust differs.
          other: runnerConfig({ knownHostsFile: file }),
        },
      });
      // The trusted runner's shared connection is open (it stays up 60 s after its last use).
      const trusted = await handle.callText('task_start', { task: 'Nothing', runner: 'build' });
      expect(trusted.isError, trusted.text).toBe(false);
      await pollTaskStatus(handle, taskIdOf(trusted.text), ENDED, 30_000);
      const jobsBefore = readdirSync(join(world.dataHome, 'jobs'));
      const before = readdirSync(sshd.workdir);
      const refused = await handle.callText('task_start', { task: 'Anything', runner: 'other' });
      expect(refused.isError).toBe(true);
      for (const text of expected(file)) expect(refused.text).toContain(text);
      expect(refused.text).toContain(sshd.hostKeyFingerprint);
      expect(readdirSync(join(world.dataHome, 'jobs'))).toEqual(jobsBefore);
      expect(readdirSync(sshd.workdir)).toEqual(before);
    },
  );

  it('the host-key advice works as printed when $HOME is not the passwd home', async ({
    startWith,
    world,
  }) => {
    expect(world.env.HOME).not.toBe(userInfo().homedir);
    const handle = await startWith([{ text: 'Nothing to do.' }], {
      runners: {
        // ssh reads the passwd home's ~/.ssh/known_hosts, never $HOME's.
        plain: runnerConfig({ knownHostsFile: undefined }),
        mine: runnerConfig({ knownHostsFile: '~/trusted_hosts' }),
      },
    });
    const plain = await handle.callText('task_start', { task: 'Anything', runner: 'plain' });
    expect(plain.isError, plain.text).toBe(true);
    expect(plain.text).toContain(`>> ${join(userInfo().homedir, '.ssh', 'known_hosts')}`);
    expect(plain.text).not.toContain('~/');
    // The advice, run as printed by the same user (with the test's HOME), lets the runner in.
    const refused = await handle.callText('task_start', { task: 'Anything', runner: 'mine' });
    expect(refused.isError, refused.text).toBe(true);
    const advice = /trust it with: (ssh-keyscan .+?)\.?$/m.exec(refused.text)?.[1];
    expect(advice, refused.text).toContain(`>> ${join(world.env.HOME!, 'trusted_hosts')}`);
    execFileSync('sh', ['-c', advice!], { env: world.env, stdio: 'ignore' });
    const trusted = await handle.callText('task_start', { task: 'Anything', runner: 'mine' });
    expect(trusted.isError, trusted.text).toBe(false);
    await pollTaskStatus(handle, taskIdOf(trusted.text), ENDED, 30_000);
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
    const again = await server.start({ ...world.env, WORKER_KEY, DELEGATE_RUNNER_RETRY_MS: '50' });
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

  it('a sandboxed command cannot write the checkout’s git metadata on the runner', async ({
    startWith,
    provider,
  }) => {
    const targets = [
      '.git/config',
      '.git/hooks/post-checkout',
      '.git/HEAD',
      '.git/index',
      '.git/info/attributes',
      '.git/objects/planted',
    ];
    const attempts = targets
      .map(
        (path) =>
          `(echo x >> ${path}) 2>/dev/null && echo "WROTE ${path}" || echo "denied ${path}"`,
      )
      .join('; ');
    const handle = await startWith([bash(attempts), { text: 'Tried.' }]);
    const started = await handle.callText('task_start', { task: 'Try', runner: 'build' });
    const id = taskIdOf(started.text);
    await pollTaskStatus(handle, id, ENDED, 60_000);
    const output = JSON.stringify(provider.started!.requests[1]!.body.messages.at(-1));
    for (const path of targets) expect(output).toContain(`denied ${path}`);
    expect(output).not.toContain('WROTE');
  });

  it('per-command limits hold in the runner’s sandbox, as here', async ({
    startWith,
    provider,
  }) => {
    const handle = await startWith(
      [
        bash(
          `ulimit -Hu; ulimit -Hd; bash -c 'x=$(head -c 300000000 /dev/zero | tr "\\0" a); echo "len \${#x}"'; echo "big exit $?"`,
        ),
        { text: 'Measured.' },
      ],
      { tasks: { maxProcesses: 40, maxMemoryMb: 200 } },
    );
    const started = await handle.callText('task_start', { task: 'Measure', runner: 'build' });
    const id = taskIdOf(started.text);
    await pollTaskStatus(handle, id, ENDED, 60_000);
    const output = String(provider.started!.requests[1]!.body.messages.at(-1)?.content);
    // The hard limits, so the command cannot raise them; and they bite: 300 MB is refused.
    expect(output).toMatch(/^40\n204800\n/m);
    expect(output).toContain('cannot allocate');
    expect(output).not.toContain('len 300000000');
  });

  it('unsandboxed there, what a command plants in the checkout’s .git runs none of our git calls', async ({
    startWith,
    world,
  }) => {
    const plant = [
      `printf '#!/bin/sh\\ntouch "$(pwd)/../PWNED-$(basename "$0")"\\n' > .git/hooks/post-checkout`,
      'chmod +x .git/hooks/post-checkout',
      'for hook in pre-commit post-commit post-index-change reference-transaction; do cp .git/hooks/post-checkout .git/hooks/$hook; done',
      `git config core.fsmonitor 'touch ../PWNED-fsmonitor; false'`,
      `git config core.hooksPath .git/hooks`,
      `git config core.pager 'touch ../PWNED-pager; cat'`,
      'echo planted > planted.txt',
    ].join(' && ');
    const handle = await startWith(
      [bash(plant), bash('echo second > second.txt'), { text: 'Planted.' }],
      { sandbox: 'off' },
    );
    const started = await handle.callText('task_start', {
      task: 'Plant',
      runner: 'build',
      test_command: 'node test.js || true',
    });
    const id = taskIdOf(started.text);
    expect(await pollTaskStatus(handle, id, ENDED, 60_000)).toMatch(/done/);
    expect(jobOf(world, id).runner.sandboxed).toBe(false);
    await handle.callText('task_result', { task_id: id });
    // Both commands' files came back through resets, adds and packs on the runner: nothing fired.
    expect(git(world.project, 'show', `delegate/${id}:second.txt`)).toBe('second');
    const taskDir = `${sshd.workdir}/${id}`;
    expect(readdirSync(taskDir).filter((name) => name.startsWith('PWNED'))).toEqual([]);
  });

  it('a runner gone for good ends the task lost, with the work done before salvaged', async ({
    startWith,
    world,
  }) => {
    const doomed = await startSshd();
    try {
      const handle = await startWith(
        [
          bash(`sed -i 's/a - b/a + b/' src/add.js && echo fixed`),
          // The runner goes while the model thinks about its next step.
          bash('echo next', 1_500),
          { text: 'never' },
        ],
        {
          runners: {
            build: {
              ...runnerConfig(),
              port: doomed.port,
              knownHostsFile: doomed.knownHostsFile,
              identityFile: doomed.identityFile,
              workdir: doomed.workdir,
            },
          },
        },
      );
      const started = await handle.callText('task_start', { task: 'Fix add()', runner: 'build' });
      const id = taskIdOf(started.text);
      await waitFor(() => jobOf(world, id).filesTouched.includes('src/add.js'), 30_000);
      await doomed.kill();
      const ended = await pollTaskStatus(handle, id, ENDED, 60_000);
      expect(ended).toMatch(new RegExp(`^${id} lost`));
      expect(jobOf(world, id).error).toMatch(/runner "build" \(127\.0\.0\.1\) is unreachable/);
      await handle.callText('task_result', { task_id: id });
      expect(git(world.project, 'show', `delegate/${id}:src/add.js`)).toContain('a + b');
    } finally {
      await doomed.stop();
    }
  });

  it('a connection dropped while a command runs: the command is stopped there, its changes come back, the task goes on', async ({
    startWith,
    provider,
    world,
  }) => {
    const handle = await startWith([
      bash('echo part > made.txt && echo started && sleep 302; echo after > after.txt'),
      bash('cat made.txt; ls'),
      { text: 'Made the file.' },
    ]);
    const started = await handle.callText('task_start', { task: 'Make a file', runner: 'build' });
    expect(started.isError, started.text).toBe(false);
    const id = taskIdOf(started.text);
    await waitFor(() => sshd.runnerProcesses().some((line) => line.endsWith('sleep 302')), 30_000);
    expect(sshd.dropConnections()).toBeGreaterThan(0);
    const done = await pollTaskStatus(handle, id, ENDED, 60_000);
    expect(done).toMatch(new RegExp(`^${id} done`));
    // The model was told, with the output the command gave before the drop.
    const told = JSON.stringify(provider.started!.requests[1]!.body.messages.at(-1));
    expect(told).toContain('The connection to the runner dropped while the command ran');
    expect(told).toContain('started');
    expect(told).toContain('exit code ?');
    // What it wrote before the drop came back, and the runner's checkout still agrees.
    const next = JSON.stringify(provider.started!.requests[2]!.body.messages.at(-1));
    expect(next).toContain('part');
    expect(next).not.toContain('after.txt');
    await handle.callText('task_result', { task_id: id });
    expect(git(world.project, 'show', `delegate/${id}:made.txt`).trim()).toBe('part');
    // Nothing of it is left running there.
    await waitFor(() => sshd.runnerProcesses().length === 0, 10_000);
  });

  it('a connection dropped after a command ended there: its exit code and its changes still come back', async ({
    startWith,
    provider,
    world,
  }) => {
    // Unsandboxed, the command can end its own connection (the runner's sshd process above its
    // script), then exit while the script, cut off from us, records how it ended.
    const handle = await startWith(
      [
        bash(
          "echo part > made.txt && echo started && kill -9 $(awk '{print $4}' /proc/$PPID/stat); exit 3",
        ),
        bash('cat made.txt'),
        { text: 'Made the file.' },
      ],
      { sandbox: 'off' },
    );
    const started = await handle.callText('task_start', { task: 'Make a file', runner: 'build' });
    expect(started.isError, started.text).toBe(false);
    const id = taskIdOf(started.text);
    const done = await pollTaskStatus(handle, id, ENDED, 60_000);
    expect(done).toMatch(new RegExp(`^${id} done`));
    const told = JSON.stringify(provider.started!.requests[1]!.body.messages.at(-1));
    expect(told, told).toContain('the command had ended there');
    expect(told).toContain('exit code 3');
    expect(JSON.stringify(provider.started!.requests[2]!.body.messages.at(-1))).toContain('part');
    await handle.callText('task_result', { task_id: id });
    expect(git(world.project, 'show', `delegate/${id}:made.txt`).trim()).toBe('part');
  });

  it('maxTasks is a pool: a second task waits for the first to end', async ({
    startWith,
    world,
  }) => {
    const handle = await startWith([bash('sleep 2; echo slept'), { text: 'Done.' }], {
      runners: { build: runnerConfig({ maxTasks: 1 }) },
    });
    const first = taskIdOf(
      (await handle.callText('task_start', { task: 'A', runner: 'build' })).text,
    );
    const second = taskIdOf(
      (await handle.callText('task_start', { task: 'B', runner: 'build' })).text,
    );
    await pollTaskStatus(handle, first, ENDED, 60_000);
    await pollTaskStatus(handle, second, ENDED, 60_000);
    const eventsOf = (id: string) =>
      readFileSync(join(world.dataHome, 'jobs', id, 'events.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { ts: string; type: string })
        .filter((event) => event.type === 'step');
    // One task's steps all come before the other's: never two on the runner at once.
    const [a, b] = [eventsOf(first), eventsOf(second)].sort((x, y) =>
      x[0]!.ts < y[0]!.ts ? -1 : 1,
    );
    expect(b![0]!.ts >= a!.at(-1)!.ts).toBe(true);
  });

  it('refuses what a runner cannot run, before anything is made', async ({ startWith, world }) => {
    const handle = await startWith([{ text: 'never' }]);
    // A CLI-engine profile beside the builtin one (its CLI need not be installed: refused first).
    world.writeConfig({
      runners: { build: runnerConfig() },
      profiles: {
        w: { format: 'openai', baseUrl: 'http://127.0.0.1:2/v1', model: 'm', local: true },
        cli: { format: 'claude-cli', model: 'sonnet' },
      },
    });
    const refusals: Array<[Record<string, unknown>, string]> = [
      [{ profile: 'cli' }, 'runs claude-cli, a CLI that runs on this machine'],
      [{ profile: 'w', isolation: 'none' }, 'without isolation "none"'],
      [{ profile: 'w', runner: '' }, 'expected string to have >=1 characters at runner'],
    ];
    for (const [fields, reason] of refusals) {
      const started = await handle.callText('task_start', {
        task: 'Anything',
        runner: 'build',
        ...fields,
      });
      expect(started.isError, JSON.stringify(fields)).toBe(true);
      expect(started.text).toContain(reason);
    }
    const jobs = join(world.dataHome, 'jobs');
    expect(existsSync(jobs) ? readdirSync(jobs) : []).toEqual([]);
    expect(git(world.project, 'worktree', 'list')).not.toContain('t_');
  });

  it('runs attempts on a runner, each in its own folder there', async ({ startWith, world }) => {
    const handle = await startWith([
      bash(`sed -i 's/a - b/a + b/' src/add.js && pwd`),
      { text: 'Fixed.' },
    ]);
    const started = await handle.callText('task_start', {
      task: 'Fix add()',
      test_command: 'node test.js',
      runner: 'build',
      attempts: 2,
    });
    expect(started.isError, started.text).toBe(false);
    const id = taskIdOf(started.text);
    expect(await pollTaskStatus(handle, id, ENDED, 90_000)).toMatch(/done passed/);
    const result = await handle.callText('task_result', { task_id: id });
    expect(result.text).toContain('verdict: passed');
    expect(git(world.project, 'show', `delegate/${id}:src/add.js`)).toContain('a + b');
    const task = jobOf(world, id);
    const attempts = (task.attempts as Array<{ id: string }>).map((ref) => ref.id);
    for (const each of attempts) {
      expect(jobOf(world, each).runner.taskDir).toBe(`${sshd.workdir}/${each}`);
    }
    // The loser's folder there went with its worktree; the chosen one's stays until cleanup.
    const chosen = /^ *(t_[a-z0-9]+a\d) .* — (won|best ranked)/m.exec(result.text)?.[1];
    expect(attempts, result.text).toContain(chosen);
    expect(attempts.filter((each) => existsSync(`${sshd.workdir}/${each}`))).toEqual([chosen]);
    await handle.callText('task_cleanup', { task_id: id });
    expect(attempts.filter((each) => existsSync(`${sshd.workdir}/${each}`))).toEqual([]);
  });
});
