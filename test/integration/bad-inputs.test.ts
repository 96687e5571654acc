import { execFileSync } from 'node:child_process';
import { lstatSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeProvider } from '../helpers/fake-provider.ts';
import { git, initRepository } from '../helpers/git-project.ts';
import { startServer, type ServerHandle } from '../helpers/mcp-server.ts';
import { settleWorkers } from '../helpers/processes.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';
import { scaledMs } from '../helpers/timing.ts';

/**
 * One bad input per row, across every tool of the registry. Each must come back as an error
 * the supervisor can act on — never "internal error", never a stack — leave the server
 * answering, and leave nothing behind in the project or the data home.
 */
interface BadInput {
  tool: string;
  args: Record<string, unknown>;
  /** Words the error must contain (case-insensitive), so it says what went wrong. */
  says: RegExp;
  /** Tools answering for several items (delegate_batch, task_status) report one item's failure inside a successful result. */
  isInline?: boolean;
}

const NUL = 'a\u0000b';
const JOB = { task: 'Summarise' };

const CASES: readonly BadInput[] = [
  // delegate
  { tool: 'delegate', args: { task: 42 }, says: /task/i },
  { tool: 'delegate', args: { task: '' }, says: /task/i },
  { tool: 'delegate', args: {}, says: /task/i },
  { tool: 'delegate', args: { ...JOB, files: ['pipe'] }, says: /pipe.*not a regular file/i },
  {
    tool: 'delegate',
    args: { ...JOB, files: ['sock'] },
    says: /sock.*a socket, not a regular file/i,
  },
  { tool: 'delegate', args: { ...JOB, files: ['link-to-pipe'] }, says: /FIFO/ },
  { tool: 'delegate', args: { ...JOB, files: ['src'] }, says: /directory/i },
  { tool: 'delegate', args: { ...JOB, files: ['../outside.txt'] }, says: /outside the project/i },
  { tool: 'delegate', args: { ...JOB, files: ['/etc/hostname'] }, says: /outside the project/i },
  { tool: 'delegate', args: { ...JOB, files: [NUL] }, says: /NUL/ },
  { tool: 'delegate', args: { ...JOB, files: ['.git/config'] }, says: /\.git/ },
  { tool: 'delegate', args: { ...JOB, files: ['missing.txt'] }, says: /does not exist/i },
  { tool: 'delegate', args: { ...JOB, files: ['src/*.zz'] }, says: /matched no file/i },
  { tool: 'delegate', args: { ...JOB, files: 'README.md' }, says: /files/i },
  { tool: 'delegate', args: { ...JOB, write_to: 'src' }, says: /directory/i },
  { tool: 'delegate', args: { ...JOB, write_to: NUL }, says: /NUL/ },
  { tool: 'delegate', args: { ...JOB, write_to: '.git/hooks/post-checkout' }, says: /\.git/ },
  { tool: 'delegate', args: { ...JOB, write_to: '.GIT/config' }, says: /\.git/i },
  { tool: 'delegate', args: { ...JOB, write_to: '../escape.md' }, says: /outside the project/i },
  { tool: 'delegate', args: { ...JOB, write_to: 'README.md/answer.md' }, says: /not a directory/i },
  { tool: 'delegate', args: { ...JOB, write_to: 'pipe' }, says: /not a regular file/i },
  { tool: 'delegate', args: { ...JOB, write_to: 'sock' }, says: /a socket/i },
  { tool: 'delegate', args: { ...JOB, profile: 'nope' }, says: /unknown profile/i },
  { tool: 'delegate', args: { ...JOB, profile: 'constructor' }, says: /unknown profile/i },
  { tool: 'delegate', args: { ...JOB, profile: '__proto__' }, says: /unknown profile/i },
  { tool: 'delegate', args: { ...JOB, profile: 'no/such' }, says: /profile name/i },
  { tool: 'delegate', args: { ...JOB, max_output_tokens: -5 }, says: /max_output_tokens/ },
  { tool: 'delegate', args: { ...JOB, max_output_tokens: 1e12 }, says: /max_output_tokens/ },
  { tool: 'delegate', args: { ...JOB, max_output_tokens: 1.5 }, says: /max_output_tokens/ },
  // explore
  { tool: 'explore', args: {}, says: /question/ },
  { tool: 'explore', args: { question: '' }, says: /question/ },
  { tool: 'explore', args: { question: 'Where?', profile: 'nope' }, says: /unknown profile/i },
  { tool: 'explore', args: { question: 'Where?', agent: 'no-such-agent' }, says: /no agent/i },
  { tool: 'explore', args: { question: 'Where?', agent: '../x' }, says: /agent/i },
  { tool: 'explore', args: { question: 'Where?', max_turns: 0 }, says: /max_turns/ },
  { tool: 'explore', args: { question: 'Where?', max_turns: 61 }, says: /max_turns/ },
  // delegate_batch
  { tool: 'delegate_batch', args: { jobs: [] }, says: /jobs/ },
  { tool: 'delegate_batch', args: { jobs: 'all of them' }, says: /jobs/ },
  { tool: 'delegate_batch', args: { jobs: Array(21).fill(JOB) }, says: /jobs/ },
  {
    tool: 'delegate_batch',
    args: { jobs: [{ ...JOB, files: ['pipe'] }] },
    says: /not a regular file/i,
    isInline: true,
  },
  {
    tool: 'delegate_batch',
    args: { jobs: [{ ...JOB, write_to: '.git/hooks/pre-commit' }] },
    says: /\.git/,
    isInline: true,
  },
  {
    tool: 'delegate_batch',
    args: { jobs: [JOB, { ...JOB, files: [NUL] }] },
    says: /^jobs\[1\]\.files\[0\] contains a NUL byte/,
  },
  // task_start
  { tool: 'task_start', args: { task: '' }, says: /task/i },
  { tool: 'task_start', args: { task: 'Fix', workdir: 'README.md' }, says: /not a directory/i },
  { tool: 'task_start', args: { task: 'Fix', workdir: '/etc' }, says: /outside the project/i },
  { tool: 'task_start', args: { task: 'Fix', workdir: '..' }, says: /outside the project/i },
  { tool: 'task_start', args: { task: 'Fix', workdir: NUL }, says: /NUL/ },
  { tool: 'task_start', args: { task: 'Fix', workdir: '.git' }, says: /\.git/ },
  { tool: 'task_start', args: { task: 'Fix', test_command: `node ${NUL}` }, says: /NUL/ },
  { tool: 'task_start', args: { task: 'Fix', base_branch: 'no-such-branch' }, says: /base_branch/ },
  {
    tool: 'task_start',
    args: { task: 'Fix', base_branch: '--upload-pack=x' },
    says: /base_branch/,
  },
  { tool: 'task_start', args: { task: 'Fix', isolation: 'sideways' }, says: /isolation/ },
  { tool: 'task_start', args: { task: 'Fix', timeout_s: -1 }, says: /timeout_s/ },
  { tool: 'task_start', args: { task: 'Fix', max_turns: 1e9 }, says: /max_turns/ },
  { tool: 'task_start', args: { task: 'Fix', budget_usd: -1 }, says: /budget_usd/ },
  { tool: 'task_start', args: { task: 'Fix', wait_s: 1000 }, says: /wait_s/ },
  { tool: 'task_start', args: { task: 'Fix', agent: '../evil' }, says: /agent name/i },
  { tool: 'task_start', args: { task: 'Fix', agent: 'no-such-agent' }, says: /no agent/i },
  { tool: 'task_start', args: { task: 'Fix', agent: 'stuck' }, says: /no agent "stuck"/i },
  { tool: 'task_start', args: { task: 'Fix', profile: 'toString' }, says: /unknown profile/i },
  { tool: 'task_start', args: { task: 'Fix', allow_hosts: ['bad host!'] }, says: /host/i },
  // task_status, task_progress, task_answer, task_cancel, task_result, task_cleanup
  { tool: 'task_status', args: { task_ids: 't_nope' }, says: /task_ids/ },
  {
    tool: 'task_status',
    args: { task_ids: ['../../etc'] },
    says: /task id|no task/i,
    isInline: true,
  },
  { tool: 'task_progress', args: { task_id: 't_nope1' }, says: /no task/i },
  { tool: 'task_progress', args: { task_id: '../jobs' }, says: /task id|no task/i },
  { tool: 'task_progress', args: { task_id: 't_nope1', limit: -1 }, says: /limit/ },
  { tool: 'task_answer', args: { task_id: 't_nope1', answer: 'yes' }, says: /no task/i },
  { tool: 'task_answer', args: { task_id: 't_nope1', answer: '' }, says: /answer/ },
  { tool: 'task_cancel', args: { task_id: '__proto__' }, says: /task id|no task/i },
  { tool: 'task_cancel', args: { task_id: 't_nope1' }, says: /no task/i },
  { tool: 'task_result', args: { task_id: 't_nope1' }, says: /no task/i },
  { tool: 'task_result', args: { task_id: 'constructor' }, says: /task id|no task/i },
  {
    tool: 'task_result',
    args: { task_id: 't_nope1', include_patch: 'yes' },
    says: /include_patch/,
  },
  { tool: 'task_cleanup', args: {}, says: /task_id|all_finished/ },
  { tool: 'task_cleanup', args: { task_id: 't_nope1' }, says: /no task/i },
  // agents_list
  { tool: 'agents_list', args: { workdir: '/etc' }, says: /outside the project/i },
  { tool: 'agents_list', args: { workdir: '..' }, says: /outside the project/i },
  { tool: 'agents_list', args: { workdir: 'README.md' }, says: /not a directory/i },
  { tool: 'agents_list', args: { workdir: NUL }, says: /NUL/ },
  // providers, usage
  { tool: 'providers', args: { check: 'yes' }, says: /check/ },
  { tool: 'usage', args: { period: 'century' }, says: /period/ },
  // provider_set, provider_remove, provider_key
  { tool: 'provider_set', args: { name: 'bad name!' }, says: /profile name/i },
  { tool: 'provider_set', args: { name: '' }, says: /profile name/i },
  { tool: 'provider_set', args: { name: 'x'.repeat(65) }, says: /profile name/i },
  { tool: 'provider_set', args: { name: 'a.b', model: 'm' }, says: /profile name/i },
  { tool: 'provider_set', args: { name: 'x', format: 'bogus' }, says: /format/ },
  {
    tool: 'provider_set',
    args: { name: 'x', format: 'openai', base_url: 'nope', model: 'm' },
    says: /base_url/,
  },
  {
    tool: 'provider_set',
    args: { name: 'x', api_key: 'sk-abcdefghijklmnop' },
    says: /provider_key/,
  },
  { tool: 'provider_set', args: { name: 'local', pool: -3 }, says: /pool/ },
  { tool: 'provider_remove', args: { name: '__proto__' }, says: /no profile/i },
  { tool: 'provider_remove', args: { name: 'constructor' }, says: /no profile/i },
  { tool: 'provider_remove', args: { name: 'nope' }, says: /no profile/i },
  { tool: 'provider_remove', args: { name: '../config' }, says: /profile name/i },
  { tool: 'provider_key', args: { profile: 'nope' }, says: /unknown profile/i },
  { tool: 'provider_key', args: { profile: 'hasOwnProperty' }, says: /unknown profile/i },
  { tool: 'provider_key', args: { profile: '__proto__' }, says: /unknown profile/i },
  { tool: 'provider_key', args: { profile: 'bad name!' }, says: /profile name/i },
  // hook_answer (the mcp_tool hooks' tool, not the model's): arguments of the wrong shape
  { tool: 'hook_answer', args: {}, says: /event/ },
  {
    tool: 'hook_answer',
    args: { event: 'PreToolUse', tool_name: 'Read', tool_input: {}, cwd: '/' },
    says: /tool_input/,
  },
];

let world: TempEnv;
let fake: FakeProvider;
let server: ServerHandle;
let socket: Server;

/** Every path under `root` with its kind (and size, outside .git, where git itself writes). */
function listing(root: string): string[] {
  const entries: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      const info = lstatSync(path);
      const where = relative(root, path);
      const isGit = where.split('/')[0] === '.git';
      const kind = info.isDirectory()
        ? 'dir'
        : info.isFIFO()
          ? 'fifo'
          : info.isSocket()
            ? 'socket'
            : info.isSymbolicLink()
              ? 'link'
              : 'file';
      if (isGit && (name === 'index' || name === 'index.lock')) continue;
      // The lock folder the first settings change makes stays; a lock left in it would show.
      if (!(where === 'locks' && info.isDirectory()))
        entries.push(`${where} ${kind}${isGit || info.isDirectory() ? '' : ` ${info.size}`}`);
      if (info.isDirectory()) walk(path);
    }
  };
  walk(root);
  return entries.sort();
}

function snapshot() {
  return {
    project: listing(world.project),
    status: git(world.project, 'status', '--porcelain', '--ignored'),
    branches: git(world.project, 'branch', '--list'),
    worktrees: git(world.project, 'worktree', 'list', '--porcelain'),
    dataHome: listing(world.dataHome),
  };
}

beforeAll(async () => {
  world = createTempEnv();
  initRepository(world.project, {
    'README.md': '# project\n',
    'src/app.js': 'console.log(1);\n',
    '.gitignore': 'pipe\nsock\nlink-to-pipe\n.claude/\n',
  });
  execFileSync('mkfifo', [join(world.project, 'pipe')]);
  symlinkSync('pipe', join(world.project, 'link-to-pipe'));
  mkdirSync(join(world.project, '.claude', 'agents'), { recursive: true });
  execFileSync('mkfifo', [join(world.project, '.claude', 'agents', 'stuck.md')]);
  socket = createServer();
  await new Promise<void>((resolve) => socket.listen(join(world.project, 'sock'), resolve));
  writeFileSync(join(world.root, 'outside.txt'), 'secret\n');
  mkdirSync(join(world.home, '.claude', 'agents'), { recursive: true });
  fake = await startFakeProvider({ respond: () => ({ text: 'answer', model: 'm' }) });
  world.writeConfig({
    defaultProfile: 'local',
    profiles: {
      local: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm', local: true },
    },
  });
  server = await startServer(world.env);
  // Whatever a first call creates (status files, locks, the record of the sandbox check the
  // first start makes, whether it goes ahead or not) is part of the baseline.
  await server.callText('task_status', {});
  await server.callText('providers', {});
  await server.callText('task_start', { task: 'Fix', base_branch: 'no-such-branch' });
}, scaledMs(60_000));

afterAll(async () => {
  await server?.close();
  await settleWorkers(world.dataHome);
  await fake?.close();
  await new Promise((resolve) => socket?.close(resolve));
  world.cleanup();
});

describe(`${CASES.length} bad inputs across every tool`, () => {
  it('the table covers every tool of the registry', async () => {
    const { tools } = await server.client.listTools();
    const covered = new Set(CASES.map((row) => row.tool));
    expect(tools.map((tool) => tool.name).filter((name) => !covered.has(name))).toEqual([]);
    expect(CASES.length).toBeGreaterThanOrEqual(40);
  });

  it.each(CASES.map((row) => [`${row.tool} ${JSON.stringify(row.args).slice(0, 80)}`, row]))(
    '%s',
    async (_label, row) => {
      const before = snapshot();
      const { text, isError } = await server.callText(row.tool, row.args);
      if (row.isInline) {
        expect(isError, text).toBe(false);
      } else {
        expect(isError, text).toBe(true);
      }
      expect(text).toMatch(row.says);
      expect(text).not.toMatch(/internal error|bug in delegate/i);
      expect(text).not.toMatch(/\n\s+at .+:\d+:\d+/);
      const alive = await server.callText('task_status', {});
      expect(alive.isError).toBe(false);
      expect(snapshot()).toEqual(before);
      expect(fake.requests).toHaveLength(0);
    },
  );
});
