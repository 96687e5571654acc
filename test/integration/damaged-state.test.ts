// Damaged state: job files that do not parse, broken credentials, ledger and data home, and
// JSON with a byte-order mark. Each case damages real files under a real server and checks that
// the message names the file and the next step, that nothing says "internal error", that the
// server still answers, and that cleanup leaves no worktree, branch or process behind.
import { execFile } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, type TestContext } from 'vitest';
import { CLI_BUNDLE } from '../helpers/cli-process.ts';
import {
  byAssistantTurn,
  startFakeProvider,
  type FakeProvider,
  type FakeReply,
} from '../helpers/fake-provider.ts';
import { git, initRepository } from '../helpers/git-project.ts';
import { startServer, type ServerHandle } from '../helpers/mcp-server.ts';
import { killQuietly, liveProcesses, settleWorkers } from '../helpers/processes.ts';
import { createTempEnv, projectApprovals, type TempEnv } from '../helpers/temp-env.ts';
import { pollTaskStatus, taskIdOf, waitFor } from '../helpers/wait.ts';

const BOM = '\uFEFF';
const KEY = 'sk-damaged-state-test-key-0123456789';

let world: TempEnv;
let fake: FakeProvider | undefined;
let server: ServerHandle | undefined;
/** Task workers started by a case, killed at the end whatever their job.json says. */
const workers: number[] = [];
/** Mounts made by a case, unmounted at the end; folders made unwritable, made writable again. */
const mounts: string[] = [];
const lockedDirs: string[] = [];

beforeEach(() => {
  world = createTempEnv();
  initRepository(world.project, { 'a.txt': 'one\n' });
});
afterEach(async () => {
  await server?.close();
  for (const mount of mounts.splice(0)) await run('umount', [mount]);
  for (const dir of lockedDirs.splice(0)) await run('chmod', ['-R', 'u+w', dir]);
  for (const pid of workers.splice(0)) killQuietly(-pid);
  await settleWorkers(world.dataHome);
  await fake?.close();
  server = undefined;
  fake = undefined;
  world.cleanup();
});

function run(command: string, args: string[], env = world.env): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd: world.project, env, encoding: 'utf8' },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

const cli = (...args: string[]) => run(process.execPath, [CLI_BUNDLE, ...args]);

async function startWith(respond: FakeReply[] | ((request: never) => FakeReply), profile = {}) {
  fake = await startFakeProvider({ respond: respond as never });
  world.writeConfig({
    profiles: {
      w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm', local: true, ...profile },
    },
  });
  server = await startServer(world.env);
  return server;
}

/** The readable-error contract: names the file, says no "internal error", and the server still answers. */
async function expectReadable(text: string, ...named: string[]): Promise<void> {
  for (const part of named) expect(text, text).toContain(part);
  expect(text).not.toMatch(/internal error|This is a bug/);
  const alive = await server!.callText('agents_list', {});
  expect(alive.isError, alive.text).toBe(false);
}

const jobFile = (id: string, name = 'job.json') => join(world.dataHome, 'jobs', id, name);
const delegateWorktrees = () =>
  git(world.project, 'worktree', 'list', '--porcelain')
    .split('\n')
    .filter((line) => line.startsWith('worktree ') && line.includes('/worktrees/'));
const delegateBranches = () => git(world.project, 'branch', '--list', 'delegate/*');
const processesOf = (id: string) =>
  liveProcesses(({ pid }) => {
    try {
      return readFileSync(`/proc/${pid}/environ`, 'latin1').includes(`DELEGATE_TASK_ID=${id}\0`);
    } catch {
      return false;
    }
  });

/** A task left running (the model never answers): its worktree and branch exist. */
async function runningTask(): Promise<string> {
  const handle = await startWith(() => ({ kind: 'hang' }));
  const id = taskIdOf((await handle.callText('task_start', { task: 'work' })).text);
  await pollTaskStatus(handle, id, /running/);
  await waitFor(() => fake!.requests.length > 0);
  const job = JSON.parse(readFileSync(jobFile(id), 'utf8')) as { worker: { pid: number } };
  workers.push(job.worker.pid);
  expect(delegateBranches()).toContain(`delegate/${id}`);
  return id;
}

/** Lists, reads and cleans a damaged task, then checks nothing of it is left. */
async function expectDamagedAndCleaned(id: string, file: string, problem: RegExp): Promise<void> {
  const status = (await server!.callText('task_status', {})).text;
  expect(status).toMatch(new RegExp(`^${id} damaged: `, 'm'));
  expect(status).toMatch(problem);
  const firstLine = status.split('\n').find((line) => line.startsWith(id))!;
  expect(firstLine.length).toBeLessThanOrEqual(160);
  expect(firstLine).toMatch(new RegExp(`→ task_cleanup ${id} removes it$`));
  await expectReadable(status, file, `branch delegate/${id}`, `task_cleanup ${id}`);
  expect(status).toMatch(new RegExp(`worktree \\S+/worktrees/project/${id}`));
  const byId = (await server!.callText('task_status', { task_ids: [id] })).text;
  expect(byId).toMatch(new RegExp(`^${id} damaged: `));
  const result = await server!.callText('task_result', { task_id: id });
  expect(result.isError).toBe(true);
  await expectReadable(result.text, `Task ${id}`, 'is damaged', file, `task_cleanup ${id}`);
  const cleaned = await server!.callText('task_cleanup', { task_id: id });
  await expectReadable(cleaned.text, `${id}: damaged task cleaned up`);
  expect(cleaned.isError).toBe(false);
  expect(delegateWorktrees()).toEqual([]);
  expect(delegateBranches()).toBe('');
  expect(existsSync(join(world.dataHome, 'jobs', id))).toBe(false);
  expect(processesOf(id)).toEqual([]);
  expect((await server!.callText('task_status', {})).text).toBe(
    'No active or unreviewed tasks in this project.',
  );
}

interface Case {
  name: string;
  check(context: TestContext): Promise<void>;
}

const CASES: Case[] = [
  {
    name: 'a truncated job.json of a running task: listed damaged, its worker stopped, all removed',
    async check() {
      const id = await runningTask();
      const text = readFileSync(jobFile(id), 'utf8');
      writeFileSync(jobFile(id), text.slice(0, Math.floor(text.length / 2)));
      await expectDamagedAndCleaned(id, jobFile(id), /job\.json is not valid JSON \(cut off/);
    },
  },
  {
    name: 'an empty job.json: listed damaged with the worktree and branch from the repository',
    async check() {
      const id = await runningTask();
      truncateSync(jobFile(id), 0);
      await expectDamagedAndCleaned(id, jobFile(id), /job\.json is empty/);
    },
  },
  {
    name: 'a job.json with a garbage state: listed damaged, cleaned up',
    async check() {
      const id = await runningTask();
      const job = JSON.parse(readFileSync(jobFile(id), 'utf8')) as Record<string, unknown>;
      writeFileSync(jobFile(id), JSON.stringify({ ...job, state: 'exploded' }));
      await expectDamagedAndCleaned(id, jobFile(id), /has an unknown state \("exploded"\)/);
    },
  },
  {
    name: 'a job.json of binary garbage: found through its delegate/<id> branch, cleaned up',
    async check() {
      const id = await runningTask();
      writeFileSync(jobFile(id), Buffer.from([0x00, 0xff, 0x13, 0x37, 0x7b]));
      await expectDamagedAndCleaned(id, jobFile(id), /job\.json is not valid JSON/);
    },
  },
  {
    name: 'a job folder removed by hand: its left-over worktree is listed damaged and cleaned up',
    async check() {
      const id = await runningTask();
      rmSync(join(world.dataHome, 'jobs', id), { recursive: true, force: true });
      // Past the minute in which a worktree without a job folder may be a task being started.
      const worktree = join(world.dataHome, 'worktrees', 'project', id);
      const anHourAgo = new Date(Date.now() - 3_600_000);
      utimesSync(worktree, anHourAgo, anHourAgo);
      await expectDamagedAndCleaned(
        id,
        jobFile(id),
        /job\.json is missing: its job folder is gone, but its worktree remains/,
      );
      expect(existsSync(worktree)).toBe(false);
    },
  },
  {
    name: 'the CLI lists a damaged task (text and --json) and `delegate cleanup` removes it',
    async check() {
      const id = await runningTask();
      writeFileSync(jobFile(id), '{"id": "');
      const listed = await cli('tasks');
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout).toMatch(
        new RegExp(`^${id} damaged: job\\.json .*delegate cleanup ${id}`, 'm'),
      );
      const json = await cli('tasks', '--json');
      const entry = (JSON.parse(json.stdout) as Array<Record<string, any>>).find(
        (e) => e.id === id,
      );
      expect(entry?.state).toBe('damaged');
      expect(entry?.damaged).toMatchObject({ file: jobFile(id), branch: `delegate/${id}` });
      expect(entry?.damaged.worktree).toMatch(new RegExp(`/worktrees/project/${id}$`));
      const result = await cli('result', id);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`is damaged: ${jobFile(id)}`);
      expect(result.stderr).not.toContain('internal error');
      const cleaned = await cli('cleanup', id);
      expect(cleaned.code, cleaned.stderr).toBe(0);
      expect(cleaned.stdout).toContain(`${id}: damaged task cleaned up`);
      expect(delegateWorktrees()).toEqual([]);
      expect(delegateBranches()).toBe('');
      expect(processesOf(id)).toEqual([]);
    },
  },
  {
    name: 'a truncated result.json: task_result names it; cleanup removes the worktree, keeps the unmerged branch',
    async check() {
      const handle = await startWith(
        byAssistantTurn([
          { toolUses: [{ name: 'write_file', input: { path: 'b.txt', content: 'work\n' } }] },
          { text: 'Wrote b.txt.' },
        ]),
      );
      const id = taskIdOf((await handle.callText('task_start', { task: 'write b' })).text);
      await pollTaskStatus(handle, id, / done /);
      await settleWorkers(world.dataHome);
      const result = jobFile(id, 'result.json');
      const text = readFileSync(result, 'utf8');
      writeFileSync(result, text.slice(0, 40));
      const status = (await handle.callText('task_status', {})).text;
      await expectReadable(status, `${id} damaged: result.json is not valid JSON (cut off`);
      const review = await handle.callText('task_result', { task_id: id });
      expect(review.isError).toBe(true);
      await expectReadable(
        review.text,
        `Task ${id} (done) is damaged: ${result}`,
        `delegate/${id}`,
      );
      const cleaned = (await handle.callText('task_cleanup', { all_finished: true })).text;
      await expectReadable(
        cleaned,
        `${id}: cleaned up; branch delegate/${id} kept`,
        'git branch -D',
      );
      expect(delegateWorktrees()).toEqual([]);
      expect(delegateBranches()).toContain(`delegate/${id}`);
      expect(existsSync(join(world.dataHome, 'jobs', id))).toBe(false);
    },
  },
  {
    name: 'credentials.json is a directory: a local profile works, a profile needing the stored key names the file',
    async check() {
      mkdirSync(join(world.dataHome, 'credentials.json'));
      const handle = await startWith([{ text: 'local answer' }]);
      const local = await handle.callText('delegate', { task: 'hi' });
      expect(local.isError, local.text).toBe(false);
      expect(local.text).toContain('local answer');
      world.writeConfig({
        profiles: { cloud: { format: 'openai', baseUrl: fake!.openaiBaseUrl, model: 'm' } },
      });
      const cloud = await handle.callText('delegate', { task: 'hi', profile: 'cloud' });
      expect(cloud.isError).toBe(true);
      await expectReadable(
        cloud.text,
        `${join(world.dataHome, 'credentials.json')} is a directory, not a file`,
        'store the keys again with provider_key',
      );
      const providers = await handle.callText('providers', {});
      expect(providers.isError, providers.text).toBe(false);
      await expectReadable(providers.text, 'credentials.json is a directory');
    },
  },
  {
    name: 'credentials.json is garbage: a local profile works and the key is never quoted',
    async check() {
      writeFileSync(join(world.dataHome, 'credentials.json'), `garbage ${KEY}`, { mode: 0o600 });
      const handle = await startWith([{ text: 'local answer' }]);
      const local = await handle.callText('delegate', { task: 'hi' });
      expect(local.isError, local.text).toBe(false);
      const providers = (await handle.callText('providers', {})).text;
      await expectReadable(providers, 'credentials.json is not valid JSON');
      expect(providers).not.toContain(KEY);
    },
  },
  {
    name: 'credentials.json is garbage: a profile keyed by api_key_env works, one needing the stored key is refused',
    async check() {
      writeFileSync(join(world.dataHome, 'credentials.json'), '{"keys": {', { mode: 0o600 });
      fake = await startFakeProvider({ respond: [{ text: 'env-keyed answer' }] });
      world.writeConfig({
        profiles: {
          env: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm', apiKeyEnv: 'W_KEY' },
          stored: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm' },
        },
      });
      server = await startServer({ ...world.env, W_KEY: KEY });
      const keyed = await server.callText('delegate', { task: 'hi', profile: 'env' });
      expect(keyed.isError, keyed.text).toBe(false);
      expect(fake.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
      const stored = await server.callText('delegate', { task: 'hi', profile: 'stored' });
      expect(stored.isError).toBe(true);
      await expectReadable(
        stored.text,
        `${join(world.dataHome, 'credentials.json')} is not valid JSON (cut off`,
        'Move it away',
      );
      expect(fake.requests).toHaveLength(1);
    },
  },
  {
    name: 'a ledger day file that is a directory: usage names it and what to do',
    async check() {
      const day = new Date().toISOString().slice(0, 10);
      const ledgerFile = join(world.dataHome, 'ledger', `${day}.jsonl`);
      mkdirSync(ledgerFile, { recursive: true });
      const handle = await startWith([{ text: 'x' }]);
      const usage = await handle.callText('usage', {});
      expect(usage.isError).toBe(true);
      await expectReadable(
        usage.text,
        `The ledger file ${ledgerFile} is a directory`,
        'Move it away',
      );
    },
  },
  {
    name: 'a ledger folder that is a file: the call is refused naming the data home entry, nothing crashes',
    async check() {
      writeFileSync(join(world.dataHome, 'ledger'), 'not a folder');
      const handle = await startWith([{ text: 'answer' }]);
      const call = await handle.callText('delegate', { task: 'hi' });
      await expectReadable(call.text, join(world.dataHome, 'ledger'));
      expect(call.text).toMatch(/EEXIST|ENOTDIR/);
      expect(call.text).toContain('data home');
    },
  },
  {
    name: 'a read-only data home: calls say so and how to point DELEGATE_HOME elsewhere; nothing is left in the repository',
    async check(context) {
      const handle = await startWith([{ text: 'answer' }]);
      await makeReadOnly(world.dataHome, context);
      for (const [tool, args] of [
        ['delegate', { task: 'hi' }],
        ['task_start', { task: 'work' }],
        [
          'provider_set',
          {
            name: 'x',
            format: 'openai',
            base_url: 'http://127.0.0.1:9/v1',
            model: 'm',
            local: true,
          },
        ],
      ] as const) {
        const { text, isError } = await handle.callText(tool, args);
        expect(isError, text).toBe(true);
        await expectReadable(text, world.dataHome, 'DELEGATE_HOME');
        expect(text).toMatch(/read-only|permission denied/);
      }
      expect(delegateWorktrees()).toEqual([]);
      expect(delegateBranches()).toBe('');
      const cli = await run(process.execPath, [CLI_BUNDLE, 'run', 'hi']);
      expect(cli.code).not.toBe(0);
      expect(cli.stderr).toContain('DELEGATE_HOME');
      expect(cli.stderr).not.toContain('internal error');
    },
  },
  {
    name: 'config.json with a byte-order mark is read',
    async check() {
      fake = await startFakeProvider({ respond: [{ text: 'bom config answer' }] });
      writeFileSync(
        join(world.dataHome, 'config.json'),
        BOM +
          JSON.stringify({
            profiles: {
              w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm', local: true },
            },
          }),
      );
      server = await startServer(world.env);
      const answer = await server.callText('delegate', { task: 'hi' });
      expect(answer.isError, answer.text).toBe(false);
      expect(answer.text).toContain('bom config answer');
    },
  },
  {
    name: 'a project file with a byte-order mark is read',
    async check() {
      fake = await startFakeProvider({ respond: [{ text: 'bom project answer' }] });
      world.writeConfig(projectApprovals(world, { format: 'openai', baseUrl: fake.openaiBaseUrl }));
      world.writeProjectFile(
        '.claude/delegate.json',
        BOM +
          JSON.stringify({
            profiles: {
              p: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm', local: true },
            },
          }),
      );
      server = await startServer(world.env);
      const answer = await server.callText('delegate', { task: 'hi', profile: 'p' });
      expect(answer.isError, answer.text).toBe(false);
      expect(answer.text).toContain('bom project answer');
    },
  },
  {
    name: 'credentials.json with a byte-order mark: its stored key is sent',
    async check() {
      fake = await startFakeProvider({ respond: [{ text: 'keyed answer' }] });
      const origin = new URL(fake.openaiBaseUrl).origin;
      writeFileSync(
        join(world.dataHome, 'credentials.json'),
        BOM + JSON.stringify({ version: 1, keys: { w: { key: KEY, origin, savedAt: '' } } }),
        { mode: 0o600 },
      );
      world.writeConfig({
        profiles: { w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm' } },
      });
      server = await startServer(world.env);
      const answer = await server.callText('delegate', { task: 'hi' });
      expect(answer.isError, answer.text).toBe(false);
      expect(fake.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    },
  },
  {
    name: 'a job.json with a byte-order mark is a healthy task, not a damaged one',
    async check() {
      const id = await runningTask();
      await server!.callText('task_cancel', { task_id: id });
      writeFileSync(jobFile(id), BOM + readFileSync(jobFile(id), 'utf8'));
      const status = (await server!.callText('task_status', { task_ids: [id] })).text;
      expect(status).toMatch(new RegExp(`^${id} cancelled`));
    },
  },
  {
    name: 'garbage status files: the status line and the monitor records are rebuilt, nothing fails',
    async check() {
      const status = join(world.dataHome, 'status');
      mkdirSync(status, { recursive: true });
      writeFileSync(join(status, 'lines'), Buffer.from([0xff, 0x00, 0x0a, 0x7b, 0x09]));
      writeFileSync(join(status, '1-2.announced.json'), '{"announced": ');
      const shown = await cli('statusline', 'show');
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stdout).toContain(`Now, for ${world.project}: (nothing to show)`);
      const id = await runningTask();
      await waitFor(() => readFileSync(join(status, 'lines'), 'utf8').includes(world.project));
      const again = await cli('statusline', 'show');
      expect(again.stdout).toContain(id);
      expect(`${shown.stderr}${again.stderr}`).not.toContain('internal error');
    },
  },
  {
    name: "Claude Code's settings.json with a byte-order mark: statusline install keeps what it holds",
    async check() {
      const settingsFile = join(world.home, '.claude', 'settings.json');
      mkdirSync(join(world.home, '.claude'), { recursive: true });
      writeFileSync(settingsFile, `${BOM}{"theme": "dark"}`);
      const installed = await cli('statusline', 'install');
      expect(installed.code, installed.stderr).toBe(0);
      const written = JSON.parse(readFileSync(settingsFile, 'utf8')) as Record<string, unknown>;
      expect(written.theme).toBe('dark');
      expect(written.statusLine).toBeDefined();
    },
  },
];

/**
 * Makes a folder unwritable even for root: a read-only bind mount where mounting is allowed,
 * else mode a-w (which stops any other user). Checked with a write; skipped, saying why, when
 * neither stops it here.
 */
async function makeReadOnly(dir: string, context: TestContext): Promise<void> {
  const bound = process.getuid?.() === 0 ? await run('mount', ['--bind', dir, dir]) : undefined;
  if (bound?.code === 0) {
    mounts.push(dir);
    const remounted = await run('mount', ['-o', 'remount,bind,ro', dir]);
    expect(remounted.code, remounted.stderr).toBe(0);
  } else {
    lockedDirs.push(dir);
    await run('chmod', ['-R', 'a-w', dir]);
  }
  try {
    writeFileSync(join(dir, 'probe'), '');
  } catch {
    return;
  }
  rmSync(join(dir, 'probe'));
  context.skip('root without the right to mount: no way to make a folder read-only here');
}

describe('damaged state: readable errors, nothing invisible, nothing orphaned', () => {
  it('has at least 10 cases', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(10);
  });
  it.for(CASES)('$name', async (entry, context) => {
    await entry.check(context);
  });
});
