/**
 * Many task starts at once in one repository, from several server processes: every start
 * succeeds or is refused in one clear line, and nothing is left that no task owns (a branch,
 * a worktree, a folder under the data home).
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect } from 'vitest';
import type { FakeReply, RecordedRequest } from '../helpers/fake-provider.ts';
import { git } from '../helpers/git-project.ts';
import type { ServerHandle } from '../helpers/mcp-server.ts';
import { settleWorkers } from '../helpers/processes.ts';
import { taskTest as it } from '../helpers/task-world.ts';

const SERVERS = 3;
const STARTS_PER_SERVER = 10;

/** Tasks whose text says "write" write a file (their branch stays); the others change nothing. */
function respond(request: RecordedRequest): FakeReply {
  const messages = JSON.stringify(request.body?.messages ?? []);
  const isFirstTurn = !messages.includes('"assistant"');
  if (isFirstTurn && messages.includes('please write')) {
    return { toolUses: [{ name: 'write_file', input: { path: 'made.txt', content: 'made\n' } }] };
  }
  return { text: 'Done.' };
}

/** The ids of the tasks a listing names, sorted. */
const idsIn = (lines: string[]) =>
  lines.flatMap((line) => /t_[a-z0-9]+/.exec(line)?.[0] ?? []).sort();

function worktreeIds(project: string): string[] {
  return idsIn(
    git(project, 'worktree', 'list', '--porcelain')
      .split('\n')
      .filter((line) => line.startsWith('worktree ')),
  );
}

function branchIds(project: string): string[] {
  return idsIn(git(project, 'branch', '--list', 'delegate/*').split('\n'));
}

function folderIds(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

async function endedAll(server: ServerHandle, ids: string[]): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const { text } = await server.callText('task_status', { task_ids: ids });
    const running = text.split('\n').filter((line) => /\b(queued|running)\b/.test(line));
    if (running.length === 0) return;
    if (Date.now() > deadline) throw new Error(`still running: ${running.join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('concurrent task starts in one repository', () => {
  // Unsandboxed, each task's end also runs git fsck, which reads every worktree.
  it.for(['auto', 'off'])(
    `${SERVERS * STARTS_PER_SERVER} starts at once from ${SERVERS} servers (sandbox %s): no internal error, no orphan branch, worktree or folder`,
    async (sandbox, { world, provider, server }) => {
      const fake = await provider.start({ respond });
      world.writeConfig({
        sandbox,
        profiles: {
          w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm', local: true, pool: 30 },
        },
      });
      // Uncommitted work: every start snapshots it (a scratch index each) before its worktree.
      writeFileSync(join(world.project, 'notes.txt'), 'uncommitted\n');
      const servers = await Promise.all(Array.from({ length: SERVERS }, () => server.start()));
      const began = Date.now();
      const answers = await Promise.all(
        servers.flatMap((handle, serverIndex) =>
          Array.from({ length: STARTS_PER_SERVER }, (_, index) =>
            handle.callText('task_start', {
              task: `task ${serverIndex}.${index}${index % 2 === 0 ? ', please write' : ''}`,
              // A preflight each, in the task's sandbox, at the same time as the other starts.
              test_command: 'test -f notes.txt',
            }),
          ),
        ),
      );
      const wallMs = Date.now() - began;
      process.stderr.write(
        `[concurrent-starts] sandbox ${sandbox}: ${answers.length} starts took ${wallMs} ms\n`,
      );
      const failures = answers.filter((answer) => answer.isError).map((answer) => answer.text);
      for (const text of failures) {
        expect.soft(text).not.toMatch(/internal error|bug in delegate/);
        expect.soft(text.trim().split('\n')).toHaveLength(1);
      }
      const started = idsIn(answers.filter((answer) => !answer.isError).map((a) => a.text));
      await endedAll(servers[0]!, started);
      // A task shows done before its worker has removed an unchanged worktree.
      await settleWorkers(world.dataHome, 60_000);

      // Exactly the tasks that wrote something keep their worktree and branch.
      const writers = idsIn(
        answers
          .filter((answer, index) => !answer.isError && index % 2 === 0)
          .map((answer) => answer.text),
      );
      const worktrees = join(world.dataHome, 'worktrees', basename(world.project));
      expect(worktreeIds(world.project)).toEqual(writers);
      expect(branchIds(world.project)).toEqual(writers);
      expect(folderIds(worktrees)).toEqual(writers);
      expect(folderIds(join(world.dataHome, 'jobs'))).toEqual(started);
      // Every start succeeded (none was even refused), and every task ended well.
      expect(failures, failures.join('\n')).toEqual([]);
      expect(new Set(started).size).toBe(answers.length);
      const notPassed = started
        .map((id) => JSON.parse(readFileSync(join(world.dataHome, 'jobs', id, 'job.json'), 'utf8')))
        .filter((job) => job.state !== 'done' || job.verdict !== 'passed')
        .map((job) => `${job.id} ${job.state} ${job.verdict}: ${job.error}`);
      expect(notPassed).toEqual([]);

      // Cleaning them all up at once, from every server: every worktree goes, nothing errs.
      const cleaned = await Promise.all(
        writers.map((id, index) =>
          servers[index % SERVERS]!.callText('task_cleanup', { task_id: id }),
        ),
      );
      for (const answer of cleaned) expect(answer.isError, answer.text).toBe(false);
      expect(worktreeIds(world.project)).toEqual([]);
      expect(folderIds(worktrees)).toEqual([]);
      expect(folderIds(join(world.dataHome, 'jobs'))).toEqual(
        started.filter((id) => !writers.includes(id)),
      );
    },
  );
});

describe('a start that fails half-way', () => {
  it('leaves no branch, worktree or job folder, and says why in one line', async ({
    world,
    provider,
    server,
  }) => {
    const fake = await provider.start({ respond });
    world.writeConfig({
      profiles: { w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm', local: true } },
    });
    // A required filter that cannot check the file out: git makes the branch, then fails.
    writeFileSync(join(world.project, '.gitattributes'), 'data.txt filter=broken\n');
    git(world.project, 'config', 'filter.broken.clean', 'cat');
    git(world.project, 'config', 'filter.broken.smudge', 'false');
    git(world.project, 'config', 'filter.broken.required', 'true');
    writeFileSync(join(world.project, 'data.txt'), 'data\n');
    git(world.project, 'add', '-A');
    git(world.project, 'commit', '-qm', 'filtered');
    const handle = await server.start();
    const refused = await handle.callText('task_start', { task: 'Look' });
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(
      /^Could not make the task's worktree .*smudge filter broken failed/,
    );
    expect(refused.text).not.toMatch(/internal error/);
    expect(refused.text.split('\n')).toHaveLength(1);
    expect(branchIds(world.project)).toEqual([]);
    expect(worktreeIds(world.project)).toEqual([]);
    expect(folderIds(join(world.dataHome, 'worktrees', basename(world.project)))).toEqual([]);
    expect(folderIds(join(world.dataHome, 'jobs'))).toEqual([]);
  });
});
