// `delegate uninstall` against real repositories holding worktrees and branches that real tasks
// made, and real Claude Code settings files: what git and the files hold afterwards.
import { execFile, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { makeWorktree } from '../../server/src/tasks/task-place.ts';
import { byAssistantTurn, type FakeReply, type RecordedRequest } from '../helpers/fake-provider.ts';
import { CLI_BUNDLE } from '../helpers/cli-process.ts';
import { BROKEN_ADD_PROJECT, git, initRepository } from '../helpers/git-project.ts';
import type { ServerHandle } from '../helpers/mcp-server.ts';
import { taskTest } from '../helpers/task-world.ts';
import { pollTaskStatus, taskIdOf, waitFor } from '../helpers/wait.ts';
import type { TempEnv } from '../helpers/temp-env.ts';

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** The built CLI, stdin a pipe (no terminal), as from CI. */
function cli(world: TempEnv, args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI_BUNDLE, ...args],
      { env: { ...world.env, ...env }, cwd: world.project, encoding: 'utf8' },
      (error, stdout, stderr) => {
        const code = error ? ((error as { code?: number }).code ?? 1) : 0;
        resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr });
      },
    );
  });
}

const use = (name: string, input: Record<string, unknown>): FakeReply => ({
  toolUses: [{ name, input }],
});

/**
 * One server per project (tasks work under their server's project). Tasks whose text says
 * "hang here" wait on the model forever; the others write a file and end.
 */
const it = taskTest.extend(
  'startServers',
  ({ world, provider, server }) =>
    async (projects: string[]): Promise<ServerHandle[]> => {
      const writes = byAssistantTurn([
        use('write_file', { path: 'worker.txt', content: 'from the worker\n' }),
        { text: 'Wrote worker.txt.' },
      ]);
      const fake = await provider.start({
        respond: ((request: RecordedRequest) =>
          JSON.stringify(request.body.messages).includes('hang here')
            ? { kind: 'hang' }
            : writes(request)) as never,
      });
      world.writeConfig({
        profiles: { w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm', local: true } },
      });
      const servers: ServerHandle[] = [];
      for (const project of projects)
        servers.push(await server.start({ ...world.env, CLAUDE_PROJECT_DIR: project }));
      return servers;
    },
);
// Each test makes the repositories it needs.
it.override('repository', null);

async function finishedTask(handle: ServerHandle, workdir: string): Promise<string> {
  const started = await handle.callText('task_start', { task: 'write worker.txt', workdir });
  expect(started.isError, started.text).toBe(false);
  const id = taskIdOf(started.text);
  await pollTaskStatus(handle, id, / done /);
  return id;
}

/** Everything uninstall may touch, as text: refs and worktrees per repository, settings, data home. */
function snapshot(world: TempEnv, repositories: string[]): string {
  const perRepository = repositories.map((repo) =>
    [
      git(repo, 'for-each-ref', '--format=%(refname) %(objectname)'),
      git(repo, 'worktree', 'list', '--porcelain'),
    ].join('\n'),
  );
  const settings = join(world.home, '.claude', 'settings.json');
  return [
    ...perRepository,
    existsSync(settings) ? readFileSync(settings, 'utf8') : '(no settings)',
    listTree(world.dataHome).join('\n'),
  ].join('\n---\n');
}

/** The data home's top level and its task worktree folders (the rest changes as tasks run). */
function listTree(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const worktrees = join(dir, 'worktrees');
  const trees = existsSync(worktrees)
    ? readdirSync(worktrees).flatMap((repo) =>
        readdirSync(join(worktrees, repo)).map((id) => `worktrees/${repo}/${id}`),
      )
    : [];
  return [...readdirSync(dir), ...trees].sort();
}

const branches = (repo: string) =>
  git(repo, 'for-each-ref', '--format=%(refname:strip=2)', 'refs/heads').split('\n').sort();
const worktrees = (repo: string) =>
  git(repo, 'worktree', 'list', '--porcelain')
    .split('\n')
    .filter((line) => line.startsWith('worktree '));

describe('delegate uninstall: task worktrees and branches', () => {
  it('lists, refuses while a task runs, dry-runs, refuses without --yes, then removes only what tasks made', async ({
    startServers,
    world,
  }) => {
    initRepository(world.project, BROKEN_ADD_PROJECT);
    git(world.project, 'branch', 'feature');
    git(world.project, 'branch', 'delegate/my-own-notes'); // The user's, not a task's.
    const other = join(world.root, 'other repo');
    initRepository(other, { 'README.md': 'other\n' });
    const [handle, otherHandle] = await startServers([world.project, other]);
    const inProject = await finishedTask(handle!, world.project);
    const inOther = await finishedTask(otherHandle!, other);
    // A worktree whose task record is gone: found through the repository's record of it.
    const orphan = await makeWorktree('t_orph01', world.project, undefined, world.dataHome);
    const running = taskIdOf(
      (await handle!.callText('task_start', { task: 'hang here', workdir: world.project })).text,
    );
    await pollTaskStatus(handle!, running, / running/);
    const repositories = [world.project, other];
    const before = snapshot(world, repositories);
    expect(branches(world.project)).toEqual(
      [
        'delegate/my-own-notes',
        `delegate/${inProject}`,
        `delegate/${running}`,
        'delegate/t_orph01',
        'feature',
        'main',
      ].sort(),
    );

    const refused = await cli(world, ['uninstall', '--yes']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('nothing was removed: 1 task is still running');
    expect(refused.stderr).toContain(
      `${running} (running, ${world.project}): delegate cancel ${running}`,
    );
    expect(snapshot(world, repositories)).toBe(before);

    expect((await handle!.callText('task_cancel', { task_id: running })).text).toContain(
      'cancelled',
    );
    const afterCancel = snapshot(world, repositories);
    const dryRun = await cli(world, ['uninstall', '--dry-run']);
    expect(dryRun.code, dryRun.stderr).toBe(0);
    for (const [id, repo] of [
      [inProject, world.project],
      [inOther, other],
    ] as const) {
      expect(dryRun.stdout).toContain(`  in ${repo}:`);
      expect(dryRun.stdout).toContain(
        `    worktree ${join(world.dataHome, 'worktrees', repo.split('/').pop()!, id)} (branch delegate/${id})`,
      );
      expect(dryRun.stdout).toContain(
        `    branch delegate/${id} (1 commit not on HEAD: that work goes with it)`,
      );
    }
    expect(dryRun.stdout).toContain(
      `    worktree ${orphan.worktreePath} (branch delegate/t_orph01)`,
    );
    expect(dryRun.stdout).toContain('    branch delegate/t_orph01 (');
    expect(dryRun.stdout).not.toContain('my-own-notes');
    expect(dryRun.stdout).toContain(`Kept: the data home ${world.dataHome}`);
    expect(snapshot(world, repositories)).toBe(afterCancel);

    const unconfirmed = await cli(world, ['uninstall']);
    expect(unconfirmed.code).toBe(1);
    expect(unconfirmed.stderr).toContain('Run delegate uninstall --yes to remove the above');
    expect(snapshot(world, repositories)).toBe(afterCancel);

    const done = await cli(world, ['uninstall', '--yes']);
    expect(done.code, done.stdout + done.stderr).toBe(0);
    expect(done.stdout).toContain('/plugin uninstall delegate@delegate');
    expect(branches(world.project)).toEqual(['delegate/my-own-notes', 'feature', 'main']);
    expect(branches(other)).toEqual(['main']);
    expect(worktrees(world.project)).toEqual([`worktree ${world.project}`]);
    expect(worktrees(other)).toEqual([`worktree ${other}`]);
    expect(existsSync(join(world.dataHome, 'worktrees'))).toBe(false);
    // The user's checkout and the data home's settings and records stay.
    expect(git(world.project, 'status', '--porcelain')).toBe('');
    expect(existsSync(join(world.dataHome, 'config.json'))).toBe(true);
    expect(existsSync(join(world.dataHome, 'jobs', inProject, 'job.json'))).toBe(true);

    const again = await cli(world, ['uninstall', '--dry-run']);
    expect(again.stdout).toContain("nothing of delegate's to remove");
  });

  it('--purge-data removes the data home; one that holds the home folder is refused', async ({
    world,
  }) => {
    initRepository(world.project, { 'a.txt': 'a\n' });
    await makeWorktree('t_purge1', world.project, undefined, world.dataHome);
    world.writeConfig({ profiles: {} });
    const dryRun = await cli(world, ['uninstall', '--dry-run', '--purge-data']);
    expect(dryRun.stdout).toContain(`  the data home ${world.dataHome} (`);
    expect(existsSync(world.dataHome)).toBe(true);

    const refused = await cli(world, ['uninstall', '--yes', '--purge-data'], {
      DELEGATE_HOME: world.root,
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`it holds your home folder ${world.home}`);
    expect(existsSync(world.home)).toBe(true);

    const purged = await cli(world, ['uninstall', '--yes', '--purge-data']);
    expect(purged.code, purged.stdout + purged.stderr).toBe(0);
    expect(existsSync(world.dataHome)).toBe(false);
    expect(branches(world.project)).toEqual(['main']);
    expect(worktrees(world.project)).toEqual([`worktree ${world.project}`]);
  });
});

it("a task branch checked out in a worktree of the user's is kept, and so is that worktree", async ({
  world,
}) => {
  initRepository(world.project, { 'a.txt': 'a\n' });
  const made = await makeWorktree('t_user01', world.project, undefined, world.dataHome);
  git(world.project, 'worktree', 'remove', made.worktreePath!);
  const mine = join(world.root, 'mine');
  git(world.project, 'worktree', 'add', '-q', mine, 'delegate/t_user01');
  writeFileSync(join(mine, 'edit.txt'), 'uncommitted work\n');
  await makeWorktree('t_ours01', world.project, undefined, world.dataHome);

  const done = await cli(world, ['uninstall', '--yes']);
  expect(done.code, done.stdout + done.stderr).toBe(0);
  expect(done.stdout).toContain(
    `Skipped: ${world.project}: branch delegate/t_user01 is kept: it is checked out in ${mine}.`,
  );
  expect(branches(world.project)).toEqual(['delegate/t_user01', 'main']);
  expect(worktrees(world.project)).toEqual([`worktree ${world.project}`, `worktree ${mine}`]);
  expect(readFileSync(join(mine, 'edit.txt'), 'utf8')).toBe('uncommitted work\n');
});

describe('delegate uninstall: the status line', () => {
  const claudeDir = (world: TempEnv) => join(world.home, '.claude');
  const settingsFile = (world: TempEnv) => join(claudeDir(world), 'settings.json');
  const mine = { type: 'command', command: 'printf mine', padding: 1 };

  it.for<[string, object | undefined]>([
    ['no settings file before', undefined],
    ['settings without a status line', { model: 'opus', permissions: { allow: ['Bash(ls)'] } }],
    ['settings with a status line of its own', { model: 'opus', statusLine: mine }],
  ])('%s: puts the settings back as they were', async ([, original], { world }) => {
    if (original) {
      mkdirSync(claudeDir(world), { recursive: true });
      writeFileSync(settingsFile(world), JSON.stringify(original));
    }
    expect((await cli(world, ['statusline', 'install'])).code).toBe(0);
    const installed = readFileSync(settingsFile(world), 'utf8');
    const dryRun = await cli(world, ['uninstall', '--dry-run']);
    expect(dryRun.stdout).toContain(`  status line: delegate's entry in ${settingsFile(world)}`);
    expect(dryRun.stdout).toContain(join(world.dataHome, 'bin', 'delegate-statusline.sh'));
    if (original) {
      // Install backed the settings up; uninstall keeps the copy and says where it is.
      expect(dryRun.stdout).toMatch(
        /\nKept: the copies of your Claude Code settings delegate took before changing them \(delete them once you no longer need them\): \S+settings\.json\.delegate-backup-/,
      );
    }
    if (original && 'statusLine' in original) {
      expect(dryRun.stdout).toContain('your previous status line (`printf mine`) is put back');
    }
    expect(readFileSync(settingsFile(world), 'utf8')).toBe(installed);

    const done = await cli(world, ['uninstall', '--yes']);
    expect(done.code, done.stdout + done.stderr).toBe(0);
    if (original) expect(JSON.parse(readFileSync(settingsFile(world), 'utf8'))).toEqual(original);
    else expect(existsSync(settingsFile(world))).toBe(false);
    expect(readdirSync(join(world.dataHome))).not.toContain('statusline');
    expect(existsSync(join(world.dataHome, 'bin', 'delegate-statusline.sh'))).toBe(false);
  });

  it('also removes an install made into another CLAUDE_CONFIG_DIR, and leaves a status line that is not delegate’s', async ({
    world,
  }) => {
    const elsewhere = join(world.root, 'other-claude');
    mkdirSync(elsewhere);
    writeFileSync(join(elsewhere, 'settings.json'), JSON.stringify({ statusLine: mine }));
    expect(
      (await cli(world, ['statusline', 'install'], { CLAUDE_CONFIG_DIR: elsewhere })).code,
    ).toBe(0);
    mkdirSync(claudeDir(world), { recursive: true });
    const notOurs = JSON.stringify({ statusLine: { type: 'command', command: 'echo theirs' } });
    writeFileSync(settingsFile(world), notOurs);

    const done = await cli(world, ['uninstall', '--yes']);
    expect(done.code, done.stdout + done.stderr).toBe(0);
    expect(done.stdout).toContain(
      `status line: delegate's entry in ${join(elsewhere, 'settings.json')}`,
    );
    expect(JSON.parse(readFileSync(join(elsewhere, 'settings.json'), 'utf8'))).toEqual({
      statusLine: mine,
    });
    expect(readFileSync(settingsFile(world), 'utf8')).toBe(notOurs);
  });

  it('a settings file that is not JSON is reported and left alone; the rest goes on', async ({
    world,
  }) => {
    mkdirSync(claudeDir(world), { recursive: true });
    writeFileSync(settingsFile(world), '{ not json');
    initRepository(world.project, { 'a.txt': 'a\n' });
    await makeWorktree('t_badjs1', world.project, undefined, world.dataHome);
    const done = await cli(world, ['uninstall', '--yes']);
    expect(done.code, done.stdout + done.stderr).toBe(0);
    expect(done.stdout).toContain(
      `Skipped: ${settingsFile(world)}:1:3: not valid JSON (Expected property name or '}')`,
    );
    expect(readFileSync(settingsFile(world), 'utf8')).toBe('{ not json');
    expect(branches(world.project)).toEqual(['main']);
  });
});

it('delegate uninstall --help and a wrong option', async ({ world }) => {
  const help = await cli(world, ['uninstall', '--help']);
  expect(help.code).toBe(0);
  expect(help.stdout).toMatch(
    /^Usage: delegate uninstall \[--dry-run\] \[--yes\] \[--purge-data\]/,
  );
  const wrong = await cli(world, ['uninstall', '--force']);
  expect(wrong.code).toBe(2);
  expect(wrong.stderr).toBe(
    'delegate uninstall: unknown option --force (see delegate uninstall --help)\n',
  );
  rmSync(world.dataHome, { recursive: true, force: true });
  const nothing = await cli(world, ['uninstall', '--dry-run']);
  expect(nothing.stdout).toBe(
    "delegate uninstall: nothing of delegate's to remove (no status line entry, task worktree or delegate/* branch found).\n",
  );
});

/** The CLI on a terminal (util-linux `script` gives it one), answering the prompt with `answer`. */
async function onTerminal(world: TempEnv, args: string[], answer: string): Promise<string> {
  const command = [process.execPath, CLI_BUNDLE, ...args].map((word) => `'${word}'`).join(' ');
  const child = spawn('script', ['-qec', command, '/dev/null'], {
    env: world.env,
    cwd: world.project,
  });
  let transcript = '';
  child.stdout.on('data', (chunk: Buffer) => (transcript += chunk.toString()));
  const closed = new Promise((resolve) => child.on('close', resolve));
  try {
    await waitFor(() => transcript.includes('[y/N]'), 10_000);
    child.stdin.write(`${answer}\n`);
    await closed;
  } finally {
    child.kill('SIGKILL');
  }
  return transcript;
}

it('on a terminal it asks, and only "y" removes', async ({ world }) => {
  if (spawnSync('script', ['--version']).status !== 0) return;
  initRepository(world.project, { 'a.txt': 'a\n' });
  await makeWorktree('t_tty001', world.project, undefined, world.dataHome);
  const declined = await onTerminal(world, ['uninstall'], 'n');
  expect(declined).toContain('Nothing was removed.');
  expect(branches(world.project)).toEqual(['delegate/t_tty001', 'main']);
  const accepted = await onTerminal(world, ['uninstall'], 'y');
  expect(accepted).toContain('Removed branch delegate/t_tty001');
  expect(branches(world.project)).toEqual(['main']);
});
