import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { byAssistantTurn, type FakeReply } from '../helpers/fake-provider.ts';
import { BROKEN_ADD_PROJECT, FIXED_ADD, git } from '../helpers/git-project.ts';
import type { ServerHandle } from '../helpers/mcp-server.ts';
import { taskTest } from '../helpers/task-world.ts';
import type { TempEnv } from '../helpers/temp-env.ts';
import { pollTaskStatus, taskIdOf } from '../helpers/wait.ts';

const use = (name: string, input: Record<string, unknown>): FakeReply => ({
  toolUses: [{ name, input }],
});

const it = taskTest.extend(
  'startWith',
  ({ world, provider, server }) =>
    async (steps: FakeReply[]): Promise<ServerHandle> => {
      const fake = await provider.start({ respond: byAssistantTurn(steps) });
      world.writeConfig({
        profiles: {
          w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'worker-model', local: true },
        },
      });
      return server.start({ ...world.env, DELEGATE_QUESTION_TIMEOUT_S: '60' });
    },
);

describe('tasks through the MCP tools', () => {
  it('start → progress → question → answer → done (tests pass) → result with the patch → cleanup', async ({
    startWith,
    world,
    provider,
  }) => {
    const handle = await startWith([
      use('report_progress', { note: 'reading the code' }),
      use('read_file', { path: 'src/add.js' }),
      use('ask_supervisor', { question: 'Should add() also accept strings?' }),
      use('write_file', { path: 'src/add.js', content: FIXED_ADD }),
      use('run_bash', { command: 'node test.js' }),
      { text: 'Fixed add() to add; node test.js passes.' },
    ]);
    const started = await handle.callText('task_start', {
      task: 'Fix add() so the test passes',
      test_command: 'node test.js',
    });
    expect(started.isError, started.text).toBe(false);
    const id = taskIdOf(started.text);
    expect(started.text).toContain(`branch delegate/${id}`);
    expect(started.text).toContain('preflight: node test.js → exit 1 (fails before any change)');

    const asking = await pollTaskStatus(handle, id, /needs_input/);
    expect(asking).toBe(`${id} needs_input: "Should add() also accept strings?" → task_answer`);
    expect(
      (await handle.callText('task_answer', { task_id: id, answer: 'No, numbers only.' })).text,
    ).toContain('resumes');

    const done = await pollTaskStatus(handle, id, /done|failed|lost|timeout/);
    expect(done).toMatch(new RegExp(`^${id} done passed · 1 file `));
    expect(done.length).toBeLessThanOrEqual(160);

    const progress = await handle.callText('task_progress', { task_id: id });
    expect(progress.text).toContain('files touched: src/add.js');
    expect(progress.text).toContain('question: Should add() also accept strings?');

    // The worker saw the answer as the ask_supervisor tool result.
    const answered = JSON.stringify(provider.started!.requests[3]!.body.messages);
    expect(answered).toContain('No, numbers only.');

    const result = await handle.callText('task_result', { task_id: id });
    expect(result.text).toContain(`${id} done — verdict: passed`);
    expect(result.text).toContain('test command: node test.js → exit 0');
    expect(result.text).toContain('files changed (1): M src/add.js');
    expect(result.text).toContain('+exports.add = (a, b) => a + b;');
    expect(result.text).toMatch(new RegExp(`git -C .* merge --no-ff .?delegate/${id}`));
    // The main checkout is untouched; the work is on the task branch.
    expect(readFileSync(join(world.project, 'src/add.js'), 'utf8')).toBe(
      BROKEN_ADD_PROJECT['src/add.js'],
    );
    expect(git(world.project, 'show', `delegate/${id}:src/add.js`)).toBe(FIXED_ADD.trim());
    expect(git(world.project, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('main');

    const cleaned = await handle.callText('task_cleanup', { task_id: id });
    expect(cleaned.text).toMatch(new RegExp(`^${id}: cleaned up; branch delegate/${id} kept`));
    expect(existsSync(join(world.dataHome, 'jobs', id))).toBe(false);
    expect(existsSync(join(world.dataHome, 'worktrees'))).toBe(true);
    expect(git(world.project, 'worktree', 'list')).not.toContain(id);
  });

  it('a test command that still fails gives verdict failed, with the output tail', async ({
    startWith,
  }) => {
    const handle = await startWith([
      use('write_file', { path: 'notes.md', content: 'tried\n' }),
      { text: 'Done (I think).' },
      // Two fix rounds (the default) get the failing output; the worker gives up each time.
      { text: 'I could not find the cause.' },
      { text: 'Still no idea, sorry.' },
    ]);
    const started = await handle.callText('task_start', {
      task: 'Try',
      test_command: 'node test.js',
      wait_s: 30,
    });
    expect(started.text).toContain('done — verdict: failed');
    expect(started.text).toContain('test command: node test.js → exit 1');
    expect(started.text).toContain('add(2, 3) should be 5');
    expect(started.text).toContain('files changed (1): A notes.md');
    expect(started.text).toContain('fix rounds: the tests failed 2 times before (exit 1, 1)');
  });

  it('wait_s returns the result inline for a quick task, and a broken test runner fails before any token', async ({
    startWith,
    world,
    provider,
  }) => {
    const handle = await startWith([{ text: 'Nothing to do.' }]);
    const quick = await handle.callText('task_start', { task: 'Look around', wait_s: 30 });
    expect(quick.text).toMatch(/done — verdict: unverified/);
    expect(quick.text).toContain('summary:\n  Nothing to do.');
    const before = provider.started!.requests.length;
    const broken = await handle.callText('task_start', {
      task: 'x',
      test_command: 'no-such-runner --all',
      wait_s: 5,
    });
    expect(broken.text).toMatch(/failed[\s\S]*preflight: the test command cannot run \(exit 127\)/);
    expect(provider.started!.requests.length).toBe(before);
    // Neither task changed anything: no worktree or branch of theirs is left to clean up.
    expect(quick.text).toContain('nothing changed: worktree and branch delegate/t_');
    expect(broken.text).toContain('nothing changed: worktree and branch delegate/t_');
    expect(git(world.project, 'branch', '--list', 'delegate/*')).toBe('');
    expect(
      git(world.project, 'worktree', 'list', '--porcelain').match(/^worktree /gm),
    ).toHaveLength(1);
    const outside = await handle.callText('task_start', {
      task: 'x',
      workdir: '..',
      isolation: 'none',
    });
    expect(outside.isError).toBe(true);
    expect(outside.text).toMatch(/workdir "\.\." resolves to .*, outside the project/);
  });
});

describe('where a worktree task starts', () => {
  /** What the user could lose: index, stash list, status and the files of the checkout. */
  function userState(world: TempEnv): string[] {
    const index = readFileSync(join(world.project, '.git', 'index')).toString('base64');
    const files = ['src/add.js', 'test.js', 'staged.txt', 'notes.txt', 'debug.log'].map((name) =>
      existsSync(join(world.project, name)) ? readFileSync(join(world.project, name), 'utf8') : '-',
    );
    return [
      index,
      git(world.project, 'stash', 'list'),
      git(world.project, 'status', '--porcelain'),
      ...files,
    ];
  }

  it('starts from the uncommitted changes, leaves them alone, and the patch has only the worker change', async ({
    startWith,
    world,
  }) => {
    writeFileSync(join(world.project, 'src/add.js'), FIXED_ADD); // modified, not staged
    writeFileSync(join(world.project, 'staged.txt'), 'staged\n');
    writeFileSync(join(world.project, '.gitignore'), 'debug.log\n');
    git(world.project, 'add', 'staged.txt', '.gitignore');
    writeFileSync(join(world.project, 'notes.txt'), 'untracked\n');
    writeFileSync(join(world.project, 'debug.log'), 'ignored\n');
    const before = userState(world);
    const head = git(world.project, 'rev-parse', 'HEAD');
    const handle = await startWith([
      use('write_file', { path: 'worker.txt', content: 'from the worker\n' }),
      { text: 'Added worker.txt.' },
    ]);
    // Passes only with the uncommitted add.js, the staged file and the untracked one; no ignored one.
    const check = 'node test.js && test -f staged.txt && test -f notes.txt && test ! -e debug.log';
    const started = await handle.callText('task_start', {
      task: 'Add worker.txt',
      test_command: check,
    });
    expect(started.isError, started.text).toBe(false);
    const id = taskIdOf(started.text);
    expect(started.text).toContain(
      'started from your uncommitted changes (4 files); base_branch "HEAD" starts from the last commit instead',
    );
    expect(started.text).toContain('(passes before any change)');
    await pollTaskStatus(handle, id, /done|failed|lost|timeout/);
    const result = await handle.callText('task_result', { task_id: id });
    expect(result.text).toContain('verdict: passed');
    expect(result.text).toContain('files changed (1): A worker.txt');
    expect(result.text).toContain('started from your uncommitted changes');
    expect(result.text).not.toContain('merge --no-ff');

    const job = JSON.parse(readFileSync(join(world.dataHome, 'jobs', id, 'job.json'), 'utf8'));
    expect(job.uncommittedAtStart).toEqual({ head, files: 4 });
    expect(git(world.project, 'rev-parse', `${job.baseCommit}^`)).toBe(head);
    const patch = readFileSync(join(world.dataHome, 'jobs', id, 'patch.diff'), 'utf8');
    expect(patch).toContain('worker.txt');
    expect(patch).not.toMatch(/add\.js|staged\.txt|notes\.txt/);
    expect(userState(world)).toEqual(before);
    expect(git(world.project, 'rev-parse', 'HEAD')).toBe(head);
    // The patch applies onto the uncommitted changes, as the instructions say.
    git(world.project, 'apply', join(world.dataHome, 'jobs', id, 'patch.diff'));
    expect(readFileSync(join(world.project, 'worker.txt'), 'utf8')).toBe('from the worker\n');
  });

  it('base_branch starts from the commit as before; a repository with no commits is refused, leaving nothing', async ({
    startWith,
    world,
  }) => {
    writeFileSync(join(world.project, 'src/add.js'), FIXED_ADD);
    const handle = await startWith([{ text: 'Nothing.' }, { text: 'Nothing.' }]);
    const fromHead = await handle.callText('task_start', {
      task: 'Look',
      base_branch: 'HEAD',
      test_command: 'node test.js',
    });
    expect(fromHead.text).not.toContain('uncommitted');
    expect(fromHead.text).toContain('(fails before any change)');

    rmSync(join(world.project, '.git'), { recursive: true, force: true });
    git(world.project, 'init', '-q', '-b', 'main');
    const jobsBefore = readdirSync(join(world.dataHome, 'jobs'));
    const refused = await handle.callText('task_start', { task: 'Look' });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain('has no commits yet');
    expect(refused.text).toContain('isolation: "none"');
    expect(refused.text).not.toContain('internal error');
    expect(readdirSync(join(world.dataHome, 'jobs'))).toEqual(jobsBefore);
    expect(git(world.project, 'branch', '--list', 'delegate/*')).toBe('');
    expect(git(world.project, 'worktree', 'list')).not.toContain('worktrees');
  });
});
