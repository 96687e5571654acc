/**
 * A runner loses nothing and never judges a tree that did not come back (issue 27): every git
 * step there is checked, a repository made inside the checkout gets the local treatment, each
 * command starts from exactly the worktree's files, and a connection dropped again while a
 * drop is being recovered loses nothing either. A real sshd on 127.0.0.1 (test/helpers/sshd.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { git } from '../helpers/git-project.ts';
import { bash, ENDED, runnerTest } from '../helpers/runner-world.ts';
import type { ServerHandle } from '../helpers/mcp-server.ts';
import { startSshd, type SshdFixture } from '../helpers/sshd.ts';
import type { TempEnv } from '../helpers/temp-env.ts';
import { pollTaskStatus, taskIdOf, waitFor } from '../helpers/wait.ts';

let sshd: SshdFixture;
const it = runnerTest(() => sshd);

const jobOf = (world: TempEnv, id: string) =>
  JSON.parse(readFileSync(join(world.dataHome, 'jobs', id, 'job.json'), 'utf8'));

async function runOnRunner(handle: ServerHandle, input: Record<string, unknown> = {}) {
  const started = await handle.callText('task_start', { task: 'Work', runner: 'build', ...input });
  expect(started.isError, started.text).toBe(false);
  const id = taskIdOf(started.text);
  const status = await pollTaskStatus(handle, id, ENDED, 90_000);
  return { id, status, result: (await handle.callText('task_result', { task_id: id })).text };
}

/** Repositories a command makes inside the runner's checkout: none may pass unseen. */
const NESTED: Array<[what: string, command: string, path: string]> = [
  ['git init of a subfolder', 'git init -q sub', './sub/.git'],
  ['a repository deep inside', 'mkdir -p deep/er && git init -q deep/er/r', './deep/er/r/.git'],
  [
    'a subfolder repository with a commit (git would take a gitlink for it)',
    'git init -q sub && git -C sub -c user.name=x -c user.email=x@x commit -q --allow-empty -m x',
    './sub/.git',
  ],
  ['a .git in another case', 'mkdir -p up/.GIT && echo x > up/.GIT/HEAD', './up/.GIT'],
];

describe.runIf(process.platform === 'linux')('a runner loses nothing', () => {
  beforeAll(async () => {
    sshd = await startSshd();
  });
  afterAll(async () => {
    await sshd?.stop();
  });

  for (const [what, command, path] of NESTED) {
    it(`${what}: the task ends failed, never passed with its work gone`, async ({
      startWith,
      world,
    }) => {
      // The case: the repository, then the work, then a test of that work.
      const handle = await startWith([
        bash(command),
        bash('echo done > result.txt'),
        { text: 'Wrote result.txt.' },
      ]);
      const { id, status, result } = await runOnRunner(handle, {
        test_command: 'test -f result.txt',
      });
      expect(status, result).toMatch(new RegExp(`^${id} failed`));
      const { error } = jobOf(world, id);
      expect(error).toContain(
        "git metadata in the worker's changes on the runner (a repository inside the checkout)",
      );
      expect(error).toContain(path);
      expect(result).not.toContain('verdict: passed');
    });
  }

  it("a git step that fails there ends the task failed with git's words", async ({
    startWith,
    world,
  }) => {
    // Unsandboxed, a command can leave the checkout's index locked: the next `git add` fails.
    const handle = await startWith(
      [bash(': > .git/index.lock; echo done > result.txt'), { text: 'Wrote result.txt.' }],
      { sandbox: 'off' },
    );
    const { id, status } = await runOnRunner(handle, { test_command: 'test -f result.txt' });
    expect(status).toMatch(new RegExp(`^${id} failed`));
    const { error } = jobOf(world, id);
    expect(error).toMatch(/^git add failed on the runner: .*index\.lock/);
    expect(error).toContain('could not be brought back, so the task stops');
  });

  it('each command starts from exactly the worktree’s files: a file left there is gone', async ({
    startWith,
    provider,
  }) => {
    const handle = await startWith([
      bash('echo one > one.txt'),
      bash('ls; echo listed', 3_000),
      { text: 'Listed.' },
    ]);
    const started = await handle.callText('task_start', { task: 'Work', runner: 'build' });
    const id = taskIdOf(started.text);
    const tree = `${sshd.workdir}/${id}/tree`;
    // Between the two commands, a file appears in the runner's checkout that never came back.
    await waitFor(() => provider.started!.requests.length >= 2, 30_000);
    const planted = await sshd.exec(`echo stale > ${tree}/stale.txt && echo planted`);
    expect(planted.stdout).toContain('planted');
    expect(await pollTaskStatus(handle, id, ENDED, 60_000)).toMatch(/done/);
    const listed = JSON.stringify(provider.started!.requests[2]!.body.messages.at(-1));
    expect(listed).toContain('one.txt');
    expect(listed).not.toContain('stale.txt');
  });

  it('a connection dropped again while a drop is recovered: the changes still come back', async ({
    startWith,
    provider,
    world,
  }) => {
    // The command kills its own script there (unsandboxed, it can see it): no closing line and
    // no record, so the recovery commits its changes itself — and is cut off while it does.
    const handle = await startWith(
      [
        bash('echo part > made.txt && echo started && kill -9 "$(cat ../script.pid)"; sleep 1'),
        bash('cat made.txt'),
        { text: 'Made the file.' },
      ],
      { sandbox: 'off' },
      { DELEGATE_RUNNER_RECOVERY_PAUSE_FOR_TEST: '7' },
    );
    const started = await handle.callText('task_start', { task: 'Make a file', runner: 'build' });
    const id = taskIdOf(started.text);
    await waitFor(() => sshd.runnerProcesses().some((line) => line.endsWith('sleep 7')), 30_000);
    expect(sshd.dropConnections()).toBeGreaterThan(0);
    expect(await pollTaskStatus(handle, id, ENDED, 90_000)).toMatch(new RegExp(`^${id} done`));
    const told = JSON.stringify(provider.started!.requests[1]!.body.messages.at(-1));
    expect(told).toContain('The connection to the runner dropped');
    expect(JSON.stringify(provider.started!.requests[2]!.body.messages.at(-1))).toContain('part');
    await handle.callText('task_result', { task_id: id });
    expect(git(world.project, 'show', `delegate/${id}:made.txt`).trim()).toBe('part');
    await waitFor(() => sshd.runnerProcesses().length === 0, 20_000);
  });
});
