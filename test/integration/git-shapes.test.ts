/**
 * A project's own git-shaped folders (a bare repository kept as a test fixture): a task that
 * leaves them alone ends as usual, a sandboxed worker cannot change them, and one that changes
 * them unsandboxed ends `failed` with nothing of it on the branch. The worker-made ones are the
 * git containment table's (git-escapes.test.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { byAssistantTurn, type FakeReply } from '../helpers/fake-provider.ts';
import { git } from '../helpers/git-project.ts';
import type { ServerHandle } from '../helpers/mcp-server.ts';
import { taskTest } from '../helpers/task-world.ts';
import { pollTaskStatus, taskIdOf } from '../helpers/wait.ts';

const FIXTURE = 'fixtures/repo.git';
const PROJECT = {
  'README.md': '# project\n',
  [`${FIXTURE}/HEAD`]: 'ref: refs/heads/main\n',
  [`${FIXTURE}/config`]: '[core]\n\tbare = true\n',
  [`${FIXTURE}/refs/heads/.keep`]: '',
  [`${FIXTURE}/objects/.keep`]: '',
};
const APPEND_FSMONITOR = `printf '\\tfsmonitor = "touch /tmp/never"\\n' >> ${FIXTURE}/config; echo exit=$?`;

const bash = (command: string): FakeReply => ({
  toolUses: [{ name: 'run_bash', input: { command } }],
});

const it = taskTest
  .override('repository', PROJECT)
  .extend(
    'startWith',
    ({ world, provider, server }) =>
      async (replies: FakeReply[], sandbox: 'required' | 'off') => {
        const fake = await provider.start({ respond: byAssistantTurn(replies) });
        world.writeConfig({
          sandbox,
          profiles: {
            w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm', local: true },
          },
        });
        return server.start(world.env);
      },
  );

async function runToEnd(handle: ServerHandle, input: Record<string, unknown>) {
  const started = await handle.callText('task_start', { task: 'Work.', ...input });
  expect(started.isError, started.text).toBe(false);
  const id = taskIdOf(started.text);
  const status = await pollTaskStatus(handle, id, /done|failed|lost|timeout|cancelled/);
  return { id, status, result: (await handle.callText('task_result', { task_id: id })).text };
}

describe("a project's own git-shaped folder", () => {
  it('left alone: the task ends as usual, its work on the branch', async ({ startWith, world }) => {
    const handle = await startWith(
      [
        bash(`git -C ${FIXTURE} --git-dir=. rev-parse --is-bare-repository; echo new > new.txt`),
        { text: 'Done.' },
      ],
      'required',
    );
    const { id, status, result } = await runToEnd(handle, { test_command: 'test -f new.txt' });
    expect(status, result).toMatch(/done passed/);
    expect(git(world.project, 'show', `delegate/${id}:new.txt`)).toBe('new');
  });

  it('sandboxed: the worker cannot change it', async ({ startWith, world, provider }) => {
    const handle = await startWith([bash(APPEND_FSMONITOR), { text: 'Done.' }], 'required');
    const { status, result } = await runToEnd(handle, {});
    expect(status, result).toMatch(/done/);
    const toolOutput = JSON.stringify(provider.started!.requests.at(-1)?.body?.messages);
    expect(toolOutput).toMatch(/Read-only file system/);
    expect(readFileSync(join(world.project, FIXTURE, 'config'), 'utf8')).not.toContain('fsmonitor');
  });

  for (const isolation of ['worktree', 'none'] as const) {
    it(`unsandboxed, ${isolation}: changing it fails the task, and nothing of it reaches a branch`, async ({
      startWith,
      world,
    }) => {
      const handle = await startWith(
        [bash(`${APPEND_FSMONITOR}; echo more > more.txt`), { text: 'Done.' }],
        'off',
      );
      const { id, status, result } = await runToEnd(handle, { isolation });
      expect(status, result).toMatch(/failed/);
      expect(result).toContain(
        `git metadata in the worker's changes: ${FIXTURE}/ looks like a repository (HEAD, `,
      );
      expect(result).toContain('and was changed by the worker');
      if (isolation === 'worktree') {
        // Not salvaged: the branch is the base, without the changed config or the other file.
        expect(git(world.project, 'diff', '--name-only', 'HEAD', `delegate/${id}`)).toBe('');
      } else {
        // The user's own folder is left where it was, and the result says so.
        expect(result).toContain('left in place: it was there before the task');
      }
    });
  }
});
