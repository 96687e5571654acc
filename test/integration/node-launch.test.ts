// The plugin's hooks, MCP server and CLI, started exactly as hooks/hooks.json, .mcp.json and
// bin/delegate declare them, on a PATH without Node and on one whose `node` reports v18 (a fake
// on PATH: the real old Node is not installed here). Then on the real Node, to show the launcher
// passes input, output and exit codes through.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { preToolUse } from '../helpers/hook.ts';
import { PLUGIN_ROOT } from '../helpers/mcp-server.ts';
import { pathWithoutNode } from '../helpers/no-node-path.ts';
import { createTempEnv, makeLog, type TempEnv } from '../helpers/temp-env.ts';
import { scaledMs } from '../helpers/timing.ts';

let world: TempEnv;
beforeEach(() => {
  world = createTempEnv();
});
afterEach(() => world.cleanup());

interface Declared {
  command: string;
  args: string[];
}

/** `${CLAUDE_PLUGIN_ROOT}` substituted, as Claude Code does for exec-form commands. */
function substituted(entry: Declared): Declared {
  const root = (text: string) => text.replaceAll('${CLAUDE_PLUGIN_ROOT}', PLUGIN_ROOT);
  return { command: entry.command, args: entry.args.map(root) };
}

function declaredHook(event: 'PreToolUse' | 'SessionStart'): Declared {
  const hooks = JSON.parse(readFileSync(join(PLUGIN_ROOT, 'hooks', 'hooks.json'), 'utf8'));
  // The command path (the PreToolUse guard's beside its mcp_tool hook: the one that starts Node).
  const declared = hooks.hooks[event][0].hooks.find(
    (hook: { type: string }) => hook.type === 'command',
  );
  return substituted(declared as Declared);
}

function declaredServer(): Declared {
  const mcp = JSON.parse(readFileSync(join(PLUGIN_ROOT, '.mcp.json'), 'utf8'));
  return substituted(mcp.mcpServers.workers as Declared);
}

const cliCommand = (): Declared => ({
  command: join(PLUGIN_ROOT, 'bin', 'delegate'),
  args: ['--version'],
});

/** A PATH folder holding `sh` and, for "v18", a `node` that runs the real one reporting 18.19.1. */
const pathWith = (node: 'none' | 'v18'): string =>
  pathWithoutNode(world.root, node === 'v18' ? '18.19.1' : undefined);

function run(entry: Declared, path: string, stdin: string) {
  return spawnSync(entry.command, entry.args, {
    env: { ...world.env, PATH: path },
    input: stdin,
    encoding: 'utf8',
    timeout: scaledMs(20_000),
  });
}

const LINE = (found: string) =>
  `delegate needs Node.js 20 or newer on PATH (${found}): install it from https://nodejs.org or your package manager (e.g. brew install node, or nvm install 20), then restart Claude Code.`;

describe('without Node.js 20 on PATH', () => {
  const big = () => world.writeProjectFile('big.log', makeLog(200 * 1024));
  const cases = [
    // [entry, how Claude Code reads it, exit code, stdout, stderr]
    ['PreToolUse hook: lets the call through', 'PreToolUse', 0, 'none', 'line'],
    ['SessionStart hook: tells the session', 'SessionStart', 0, 'line+', 'none'],
    // The MCP server runs a stand-in that says what to install (needs-node-server.test.ts).
    ['MCP server', 'server', 0, 'setup', 'none'],
    ['CLI', 'cli', 1, 'none', 'line'],
  ] as const;
  for (const node of ['none', 'v18'] as const) {
    const found = node === 'none' ? 'no node found' : 'found v18.19.1';
    it.each(cases)(`node ${node}: %s`, (_name, which, exitCode, stdout, stderr) => {
      const entry =
        which === 'server'
          ? declaredServer()
          : which === 'cli'
            ? cliCommand()
            : declaredHook(which);
      const stdin =
        which === 'PreToolUse'
          ? preToolUse('Read', { file_path: big() }, world.project)
          : which === 'server'
            ? `${JSON.stringify({ method: 'tools/list', params: {}, jsonrpc: '2.0', id: 1 })}\n`
            : JSON.stringify({ hook_event_name: 'SessionStart', source: 'startup' });
      const result = run(entry, pathWith(node), stdin);
      const expected = { none: '', line: `${LINE(found)}\n` };
      expect(result.status).toBe(exitCode);
      if (stdout === 'setup') {
        const { result: listed } = JSON.parse(result.stdout);
        expect(listed.tools.map((tool: { name: string }) => tool.name)).toEqual(['setup']);
        expect(listed.tools[0].description).toContain(`on PATH (${found}): install it from`);
        expect(result.stderr).toBe('');
        return;
      }
      expect(result.stdout).toBe(
        stdout === 'line+'
          ? `${LINE(found)} Until then its tools and hooks are off.\n`
          : expected[stdout],
      );
      expect(result.stderr).toBe(expected[stderr]);
    });
  }
});

describe('with Node.js 20 on PATH, through the same launcher', () => {
  it('the PreToolUse hook still denies a whole read of a big file', () => {
    const path = world.writeProjectFile('big.log', makeLog(200 * 1024));
    const result = run(
      declaredHook('PreToolUse'),
      process.env.PATH ?? '',
      preToolUse('Read', { file_path: path }, world.project),
    );
    expect(result.status, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).hookSpecificOutput.permissionDecision).toBe('deny');
  });

  it('the CLI gets its arguments and exit code', () => {
    const version = run(cliCommand(), process.env.PATH ?? '', '');
    expect(version.stdout).toMatch(/^delegate \d+\.\d+\.\d+\n$/);
    const wrong = run({ ...cliCommand(), args: ['nope'] }, process.env.PATH ?? '', '');
    expect(wrong.status).toBe(2);
    expect(wrong.stderr).toContain('delegate: unknown command "nope".');
  });

  it('the MCP server answers tools/list over stdio', async () => {
    const entry = declaredServer();
    const transport = new StdioClientTransport({
      command: entry.command,
      args: entry.args,
      env: world.env,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'launch-test', version: '1.0.0' });
    try {
      await client.connect(transport);
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toContain('task_start');
    } finally {
      await client.close();
    }
  });
});
