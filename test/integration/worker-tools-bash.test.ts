import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  FILE_AND_SHELL_TOOLS,
  type WorkerToolContext,
} from '../../server/src/agent/worker-tools/index.ts';
import { installGitGuard } from '../../server/src/sandbox/git-guard.ts';
import { killProcessGroup } from '../../server/src/sandbox/kill-process-group.ts';
import { workerEnv } from '../../server/src/sandbox/worker-env.ts';
import { liveProcesses } from '../helpers/processes.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';
import { scaledMs, settle } from '../helpers/timing.ts';

const runBash = FILE_AND_SHELL_TOOLS.find((tool) => tool.name === 'run_bash');
const IDENTITY = {
  GIT_AUTHOR_NAME: 'Worker',
  GIT_AUTHOR_EMAIL: 'worker@example.invalid',
  GIT_COMMITTER_NAME: 'Worker',
  GIT_COMMITTER_EMAIL: 'worker@example.invalid',
};

let world: TempEnv;
let context: WorkerToolContext;
/** Every group run_bash reported, with its last state. */
let groups: Map<number, boolean>;
beforeEach(() => {
  world = createTempEnv();
  groups = new Map();
  const guard = installGitGuard(join(world.root, 'bin'));
  const source = {
    ...process.env,
    HOME: world.home,
    SECRET_TOKEN: 's3cret',
    OPENAI_API_KEY: 'sk-x',
  };
  context = {
    root: world.project,
    env: workerEnv(source, { PATH: `${guard}:${process.env.PATH ?? ''}`, ...IDENTITY }),
    onChildProcess: (pgid, running) => groups.set(pgid, running),
  };
});
afterEach(async () => {
  await Promise.all([...groups.keys()].map((pgid) => killProcessGroup(pgid, 100)));
  world.cleanup();
});

const run = async (command: string, timeoutS?: number, signal?: AbortSignal) => {
  if (!runBash) throw new Error('run_bash is missing');
  const started = Date.now();
  const result = await runBash.run({ command, timeout_s: timeoutS }, { ...context, signal });
  return { ...result, elapsedMs: Date.now() - started };
};

/** Live (non-zombie) processes of a group, straight from /proc. */
function groupMembers(pgid: number): number[] {
  return liveProcesses(({ group }) => group === pgid);
}

const isRunning = (pid: number) => {
  try {
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

describe('run_bash', () => {
  it('returns stdout and stderr, ending with the exit code; a failure is not an error', async () => {
    const result = await run('echo out; echo err >&2; pwd; exit 3');
    expect(result.content).toBe(`out\nerr\n${world.project}\nexit code 3`);
    expect(result.isError).toBeUndefined();
    expect([...groups.values()]).toEqual([false]);
  });

  it('closes stdin, so cat returns at once', async () => {
    const result = await run('cat', 20);
    expect(result.content).toBe('(no output)\nexit code 0');
    expect(result.elapsedMs).toBeLessThan(scaledMs(5_000));
  });

  it('passes the filtered environment only', async () => {
    const { content } = await run('env');
    expect(content).not.toContain('SECRET_TOKEN');
    expect(content).not.toContain('OPENAI_API_KEY');
    expect(content).not.toContain('sk-x');
    expect(content).toContain('CI=true');
    expect(content).toContain('GIT_TERMINAL_PROMPT=0');
  });

  it.skipIf(process.platform !== 'linux')(
    'on timeout kills the whole tree, grandchildren included',
    async () => {
      const result = await run(`bash -c 'sleep 100 & echo $!; sleep 100 & echo $!; wait'`, 1);
      expect(result.isError).toBe(true);
      expect(result.content).toMatch(/^Timed out after 1 s: the command and every process/);
      expect(result.content).toMatch(/killed by signal SIG(TERM|KILL)$/);
      expect(result.elapsedMs).toBeLessThan(scaledMs(6_000));
      const sleepers = result.content
        .split('\n')
        .filter((line) => /^\d+$/.test(line))
        .map(Number);
      expect(sleepers).toHaveLength(2);
      expect(sleepers.filter(isRunning)).toEqual([]);
      const [pgid] = [...groups.keys()];
      expect(groupMembers(pgid ?? 0)).toEqual([]);
      expect(groups.get(pgid ?? 0)).toBe(false);
    },
  );

  it.skipIf(process.platform !== 'linux')('kills what the command left running', async () => {
    const result = await run('sleep 100 & echo started', 20);
    expect(result.elapsedMs).toBeLessThan(scaledMs(5_000));
    expect(result.content).toBe(
      'started\n[background processes still running when the command ended were killed]\nexit code 0',
    );
    expect(groupMembers([...groups.keys()][0] ?? 0)).toEqual([]);
  });

  it('keeps the head and tail of long output around a loud marker', async () => {
    const { content } = await run('seq 1 100000');
    expect(content.startsWith('1\n2\n3\n')).toBe(true);
    expect(content.endsWith('99999\n100000\nexit code 0')).toBe(true);
    expect(content).toMatch(/\n\[… \d+ bytes cut …\]\n/);
    expect(content.length).toBeLessThan(31 * 1024);
  });

  it('stops the command when the signal aborts, and refuses to start on an aborted one', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const result = await run('sleep 100', 60, controller.signal);
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/^Cancelled: /);
    expect(result.elapsedMs).toBeLessThan(scaledMs(5_000));
    if (process.platform === 'linux') expect(groupMembers([...groups.keys()][0] ?? 0)).toEqual([]);
    const again = await run('echo never', 60, controller.signal);
    expect(again).toMatchObject({
      isError: true,
      content: 'Cancelled before the command started.',
    });
  });

  it('reports a command that cannot start as an error', async () => {
    context = { ...context, env: { PATH: join(world.root, 'nowhere') } };
    const result = await run('echo hi');
    expect(result.isError).toBe(true);
    expect(result.content).toContain('could not start bash');
  });
});

describe('git guard', () => {
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: world.project,
      env: { ...context.env, PATH: process.env.PATH ?? '' },
      encoding: 'utf8',
    });

  beforeEach(() => {
    git('init', '-q', '-b', 'main');
    writeFileSync(join(world.project, 'a.txt'), 'one\n');
    git('add', 'a.txt');
    git('commit', '-q', '-m', 'first');
    git('branch', 'x');
  });

  it('refuses commands that reach remotes, leave the branch or rewrite refs', async () => {
    const refused = [
      'git push',
      'git -C . branch -f main HEAD',
      'git config --global x.y z',
      'git config core.hooksPath /tmp/evil',
      'git config --unset user.name',
      'git config set core.hooksPath /tmp/evil',
      'git checkout -b other',
      'git checkout x',
      'git switch main',
      'git merge x',
    ];
    for (const command of refused) {
      const { content, isError } = await run(command);
      expect(content, command).toContain('the task worker may not run');
      expect(content).toContain('The supervisor merges the task branch');
      expect(content.endsWith('exit code 1')).toBe(true);
      expect(isError).toBeUndefined();
    }
    expect(git('branch', '--format=%(refname:short)')).toBe('main\nx\n');
    expect(git('rev-parse', 'main')).toBe(git('rev-parse', 'x'));
    expect(existsSync(join(world.home, '.gitconfig'))).toBe(false);
    expect(readFileSync(join(world.project, '.git', 'config'), 'utf8')).not.toContain('hooksPath');
  });

  it('lets everyday commands through, with repository hooks off', async () => {
    const hook = join(world.project, '.git', 'hooks', 'pre-commit');
    writeFileSync(hook, '#!/bin/sh\necho hook ran >&2\nexit 1\n');
    chmodSync(hook, 0o755);
    writeFileSync(join(world.project, 'a.txt'), 'two\n');
    const steps = [
      'git status --short',
      'git config core.bare',
      'git config --get core.bare',
      'git diff',
      'git add a.txt',
      'git commit -q -m second',
      'git log --oneline',
      'git checkout -- a.txt',
    ];
    for (const command of steps) {
      const { content } = await run(command);
      expect(content.endsWith('exit code 0'), `${command}: ${content}`).toBe(true);
      expect(content).not.toContain('hook ran');
    }
    expect(git('log', '--format=%s')).toBe('second\nfirst\n');
    expect(git('log', '-1', '--format=%an')).toBe('Worker\n');
  });
});

describe.skipIf(process.platform !== 'linux')('killProcessGroup', () => {
  it('sends SIGKILL after the grace period to a group that ignores SIGTERM', async () => {
    const child = spawn('bash', ['-c', "trap '' TERM; sleep 100 & sleep 100; wait"], {
      detached: true,
      stdio: 'ignore',
    });
    const pgid = child.pid ?? 0;
    groups.set(pgid, true);
    await settle(200);
    expect(groupMembers(pgid).length).toBeGreaterThanOrEqual(2);
    const started = Date.now();
    await killProcessGroup(pgid, 300);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(groupMembers(pgid)).toEqual([]);
  });

  it('never throws, whatever the id', async () => {
    for (const pgid of [999_999_999, 0, -5, Number.NaN]) {
      await expect(killProcessGroup(pgid)).resolves.toBeUndefined();
    }
  });
});
