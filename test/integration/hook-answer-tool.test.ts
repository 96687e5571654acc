// The two paths of the large-read guard answer the same calls the same way: the command hooks
// (dist/pre-tool-use.cjs, hooks/post-tool-use.sh) fed stdin as Claude Code sends it, and the
// server's hook_answer tool fed the arguments hooks.json's mcp_tool hooks give it (Claude Code
// interpolates objects as JSON text). One table of calls, each asked of both.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { postToolUse, preToolUse, runHook } from '../helpers/hook.ts';
import { PLUGIN_ROOT, startServer, type ServerHandle } from '../helpers/mcp-server.ts';
import { createTempEnv, makeLog, type TempEnv } from '../helpers/temp-env.ts';
import { waitFor } from '../helpers/wait.ts';

let world: TempEnv;
let server: ServerHandle | undefined;
beforeEach(() => {
  world = createTempEnv();
  world.writeProjectFile('logs/big.log', makeLog(200 * 1024, 'ERROR disk full on /var'));
  world.writeProjectFile('small.txt', 'hello\n');
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  world.cleanup();
});

type Call = [name: string, tool: string, input: Record<string, unknown>, response?: unknown];
const big = () => join(world.project, 'logs', 'big.log');
const bash = (stdout: string) => ({ stdout, stderr: '', interrupted: false, isImage: false });

const PRE: Call[] = [
  ['whole Read of a big file', 'Read', { file_path: '<big>' }],
  ['bounded Read', 'Read', { file_path: '<big>', offset: 1, limit: 50 }],
  ['Read of a small file', 'Read', { file_path: 'small.txt' }],
  ['Read of a missing file', 'Read', { file_path: 'nope.log' }],
  ['`cat` of a big file', 'Bash', { command: 'cat logs/big.log' }],
  ['bounded pipeline', 'Bash', { command: 'cat logs/big.log | head -50' }],
  ['quoted path', 'Bash', { command: "cat 'logs/big.log'" }],
  ['small Bash call', 'Bash', { command: 'git status --short' }],
  ['Grep', 'Grep', { pattern: 'ERROR', path: '<big>', output_mode: 'content' }],
];
const POST: Call[] = [
  ['small Bash output', 'Bash', { command: 'git status' }, bash(' M a.ts\n')],
  ['100 KB Bash output', 'Bash', { command: 'npm test' }, bash(makeLog(100 * 1024, 'ERROR x'))],
  ['big Grep output', 'Grep', { pattern: 'x' }, { mode: 'content', content: makeLog(40 * 1024) }],
  ['empty Bash output', 'Bash', { command: 'true' }, bash('')],
];

const withBig = (input: Record<string, unknown>) =>
  JSON.parse(JSON.stringify(input).replaceAll('<big>', big())) as Record<string, unknown>;

/** What the command path prints, and what the tool answers, with saved-output names made equal. */
const same = (text: string) => text.replace(/outputs\/[\w.-]+\.txt/g, 'outputs/<saved>.txt');

async function bothPaths(event: 'PreToolUse' | 'PostToolUse', [, tool, raw, response]: Call) {
  const input = withBig(raw);
  const stdin =
    event === 'PreToolUse'
      ? preToolUse(tool, input, world.project)
      : postToolUse(tool, input, response, world.project);
  const command = runHook(
    event === 'PreToolUse' ? 'pre-tool-use' : 'post-tool-use.sh',
    stdin,
    world.env,
  );
  expect(command.exitCode).toBe(0);
  server ??= await startServer(world.env, world.project);
  const answered = await server.callText('hook_answer', {
    event,
    tool_name: tool,
    tool_input: JSON.stringify(input),
    cwd: world.project,
    ...(event === 'PostToolUse' ? { tool_response: JSON.stringify(response) } : {}),
  });
  expect(answered.isError).toBe(false);
  return { command: same(command.stdout), tool: same(answered.text) };
}

describe('hook_answer decides as the command hooks do (same calls, both paths)', () => {
  it.each(PRE)('PreToolUse: %s', async (...call) => {
    const { command, tool } = await bothPaths('PreToolUse', call);
    expect(tool).toBe(command);
  });

  it.each(POST)('PostToolUse: %s', async (...call) => {
    const { command, tool } = await bothPaths('PostToolUse', call);
    expect(tool).toBe(command);
  });

  it('decides at least one call each way (the table is not all passes)', async () => {
    const denied = await bothPaths('PreToolUse', PRE[0]!);
    expect(denied.tool).toContain('"permissionDecision":"deny"');
    const digested = await bothPaths('PostToolUse', POST[1]!);
    expect(digested.tool).toContain('updatedToolOutput');
    expect(readdirSync(join(world.dataHome, 'outputs'))).toHaveLength(2);
  });

  it('follows the same settings: ask mode from config.json', async () => {
    world.writeConfig({ largeRead: { mode: 'ask' } });
    const { command, tool } = await bothPaths('PreToolUse', PRE[0]!);
    expect(tool).toContain('"permissionDecision":"ask"');
    expect(tool).toBe(command);
  });

  it('answers nothing, without an error, for a call that is not a hook call', async () => {
    server = await startServer(world.env, world.project);
    for (const args of [
      { event: 'Stop', tool_name: 'Read', tool_input: '{}', cwd: world.project },
      { event: 'PreToolUse', tool_name: 'Read', tool_input: 'not json', cwd: '' },
    ]) {
      expect(await server.callText('hook_answer', args)).toEqual({ text: '', isError: false });
    }
  });

  it('is hidden from the model: listed with MCP Apps visibility "app" only', async () => {
    server = await startServer(world.env, world.project);
    const { tools } = await server.client.listTools();
    const hook = tools.find((tool) => tool.name === 'hook_answer');
    expect(hook?._meta).toEqual({ ui: { visibility: ['app'] } });
    expect(JSON.stringify(hook).length).toBeLessThan(700);
  });

  it('marks the server for hooks/fallback.sh while it runs, under the pid of its client', async () => {
    server = await startServer(world.env, world.project);
    const mark = join(world.dataHome, 'hook-servers', String(process.pid));
    // Written beside the first messages, off the start's path: there within moments.
    await waitFor(() => existsSync(mark) && readFileSync(mark, 'utf8').trim() !== '');
    expect(readFileSync(mark, 'utf8').trim()).toBe(String(server.pid));
    await server.close();
    server = undefined;
    expect(readdirSync(join(world.dataHome, 'hook-servers'))).toEqual([]);
  });

  it('hooks/fallback.sh runs the command path unless the mark names a running process', async () => {
    // A process killed and never reaped: its parent became `sleep`, which waits for no child.
    const parent = spawn('sh', ['-c', 'sleep 60 & echo $!; exec sleep 60'], { stdio: 'pipe' });
    const zombie = await new Promise<string>((resolve) =>
      parent.stdout.once('data', (data: Buffer) => resolve(data.toString().trim())),
    );
    process.kill(Number(zombie), 'SIGKILL');
    const gone = spawnSync('sh', ['-c', 'echo $$']).stdout.toString().trim();
    try {
      const marks = join(world.dataHome, 'hook-servers');
      mkdirSync(marks, { recursive: true });
      const rows: [string, string | undefined, boolean][] = [
        ['no mark', undefined, true],
        ['an empty mark', '', true],
        ['a process that is gone', gone, true],
        ['a killed server not yet reaped (a zombie)', zombie, true],
        ['a running server', String(parent.pid), false],
      ];
      for (const [what, pid, runs] of rows) {
        rmSync(join(marks, String(process.pid)), { force: true });
        if (pid !== undefined) writeFileSync(join(marks, String(process.pid)), `${pid}\n`);
        const result = spawnSync(
          'sh',
          [join(PLUGIN_ROOT, 'hooks', 'fallback.sh'), 'sh', '-c', 'echo ran'],
          { env: world.env, encoding: 'utf8' },
        );
        expect(result.stdout.includes('ran'), what).toBe(runs);
        expect(result.stderr, what).toBe('');
      }
    } finally {
      parent.kill('SIGKILL');
    }
  });
});
