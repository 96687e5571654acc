import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runClaude } from '../helpers/claude-cli.ts';
import { byAssistantTurn, startFakeProvider, type FakeProvider } from '../helpers/fake-provider.ts';
import { PLUGIN_ROOT } from '../helpers/mcp-server.ts';
import { toolResults } from '../helpers/supervisor.ts';
import { createTempEnv, makeLog, writeJobFixture, type TempEnv } from '../helpers/temp-env.ts';

let world: TempEnv;
let supervisor: FakeProvider | undefined;
beforeEach(() => {
  world = createTempEnv();
});
afterEach(async () => {
  await supervisor?.close();
  supervisor = undefined;
  world.cleanup();
});

const use = (id: string, name: string, input: Record<string, unknown>) => ({
  toolUses: [{ id, name, input }],
});

/**
 * The session's delegate server, as it marks itself for hooks/fallback.sh; killed to see what
 * Claude Code does with hooks whose server is gone.
 */
function killServer(dataHome: string): void {
  const dir = join(dataHome, 'hook-servers');
  for (const name of readdirSync(dir)) {
    process.kill(Number(readFileSync(join(dir, name), 'utf8')), 'SIGKILL');
  }
}

/** Hook answers in the stream: the command path's crash message shows that Node started. */
const hookStderr = (events: any[]) =>
  events
    .filter((event) => event.type === 'system' && event.subtype === 'hook_response')
    .map((event) => String(event.stderr))
    .join('\n');

/** Each path answers the same calls: the server in-process, or the command hook without it. */
const PATHS: [string, Record<string, string>][] = [
  // The command path would crash (and decide nothing) if it ran: the decisions are the server's.
  ['in the running server (mcp_tool hook; no Node started)', { DELEGATE_HOOK_CRASH_FOR_TEST: '1' }],
  ['by the command hook when the server failed to start', { DELEGATE_SERVER_EXIT_FOR_TEST: '1' }],
];

describe('hooks inside the real Claude Code', () => {
  it.each(PATHS)(
    'blocks a whole Read and a `cat` of a 200 KB file with a reason naming the delegate tool; bounded reads pass: %s',
    async (_path, pathEnv) => {
      const log = makeLog(200 * 1024);
      const big = world.writeProjectFile('big.log', log);
      const small = world.writeProjectFile('notes.txt', 'SMALL-FILE-CONTENT\n');
      supervisor = await startFakeProvider({
        respond: byAssistantTurn([
          use('toolu_read_big', 'Read', { file_path: big }),
          use('toolu_cat_big', 'Bash', { command: 'cat big.log', description: 'show log' }),
          use('toolu_head_big', 'Bash', {
            command: 'cat big.log | head -50',
            description: 'show head',
          }),
          use('toolu_read_small', 'Read', { file_path: small }),
          { text: 'Finished.' },
        ]),
      });
      const run = await runClaude({
        prompt: 'Look at big.log',
        cwd: world.project,
        home: world.home,
        baseUrl: supervisor.url,
        pluginDir: PLUGIN_ROOT,
        allowedTools: ['Bash', 'Read'],
        env: { DELEGATE_HOME: world.dataHome, ...pathEnv },
      });
      expect(run.exitCode, run.stderr).toBe(0);
      expect(supervisor.unscripted).toEqual([]);
      expect(hookStderr(run.events)).not.toContain('large-read guard let the call through');
      // The hook tool is the app's alone: neither listed to the model nor named in its context.
      expect(JSON.stringify(supervisor.requests[0]!.body)).not.toContain('hook_answer');
      const after = (index: number, id: string) =>
        toolResults(supervisor!.requests[index]!).get(id);

      const readBig = after(1, 'toolu_read_big');
      expect(readBig?.isError).toBe(true);
      expect(readBig?.text).toContain('mcp__plugin_delegate_workers__delegate');
      expect(readBig?.text).toContain(`"files": [${JSON.stringify(big)}]`);
      expect(readBig?.text).not.toContain(log.slice(0, 200));

      const catBig = after(2, 'toolu_cat_big');
      expect(catBig?.isError).toBe(true);
      expect(catBig?.text).toContain('mcp__plugin_delegate_workers__delegate');

      const headBig = after(3, 'toolu_head_big');
      expect(headBig?.isError).toBe(false);
      expect(headBig?.text).toContain(log.split('\n')[0]);

      const readSmall = after(4, 'toolu_read_small');
      expect(readSmall?.isError).toBe(false);
      expect(readSmall?.text).toContain('SMALL-FILE-CONTENT');
      expect(run.result?.result).toContain('Finished.');
    },
  );

  // No server to answer (it fails at start, and Claude Code does not restart it) and a command
  // path that hangs: the call goes through at the hook's timeout. (A server killed mid-session is
  // started again by Claude Code at the next call, which then guards: see the next test.)
  it('fails open when no server answers and the command path hangs past its timeout', async () => {
    const big = world.writeProjectFile('big.log', makeLog(200 * 1024));
    supervisor = await startFakeProvider({
      respond: byAssistantTurn([
        use('toolu_read_big', 'Read', { file_path: big }),
        { text: 'Done.' },
      ]),
    });
    const run = await runClaude({
      prompt: 'Read big.log',
      cwd: world.project,
      home: world.home,
      baseUrl: supervisor.url,
      pluginDir: PLUGIN_ROOT,
      allowedTools: ['Read'],
      env: {
        DELEGATE_HOME: world.dataHome,
        DELEGATE_SERVER_EXIT_FOR_TEST: '1',
        DELEGATE_HOOK_HANG_MS_FOR_TEST: '15000',
      },
      timeoutMs: 60_000,
    });
    expect(run.exitCode, run.stderr).toBe(0);
    const read = toolResults(supervisor.requests[1]!).get('toolu_read_big');
    expect(read?.isError).toBe(false);
    expect(read?.text).toContain('INFO request 0 served');
    // Claude Code gave up on the hook at its 5 s timeout, not after the 15 s hang.
    expect(run.wallMs).toBeLessThan(14_000);
  });

  it('keeps guarding after the server died: the command path decides, then the restarted server', async () => {
    const big = world.writeProjectFile('big.log', makeLog(200 * 1024));
    const steps = [
      use('toolu_small', 'Bash', { command: 'true', description: 'x' }),
      use('toolu_read_1', 'Read', { file_path: big }),
      use('toolu_read_2', 'Read', { file_path: big }),
      { text: 'Done.' },
    ];
    supervisor = await startFakeProvider({
      respond: (request) => {
        const step = byAssistantTurn(steps)(request);
        // The server answered the first call's hooks; now it dies before the first big Read.
        if (step === steps[1]) killServer(world.dataHome);
        return step;
      },
    });
    const run = await runClaude({
      prompt: 'Read big.log',
      cwd: world.project,
      home: world.home,
      baseUrl: supervisor.url,
      pluginDir: PLUGIN_ROOT,
      allowedTools: ['Bash', 'Read'],
      env: { DELEGATE_HOME: world.dataHome },
    });
    expect(run.exitCode, run.stderr).toBe(0);
    for (const [index, id] of [
      [2, 'toolu_read_1'],
      [3, 'toolu_read_2'],
    ] as const) {
      const read = toolResults(supervisor.requests[index]!).get(id);
      expect(read?.isError, id).toBe(true);
      expect(read?.text).toContain('mcp__plugin_delegate_workers__delegate');
    }
  });

  it('keeps hook_answer from the model: a direct call to it is refused as an unknown tool', async () => {
    const big = world.writeProjectFile('big.log', makeLog(200 * 1024));
    supervisor = await startFakeProvider({
      respond: byAssistantTurn([
        use('toolu_hook', 'mcp__plugin_delegate_workers__hook_answer', {
          event: 'PostToolUse',
          tool_name: 'Read',
          tool_input: JSON.stringify({ file_path: big }),
          cwd: world.project,
        }),
        { text: 'Done.' },
      ]),
    });
    const run = await runClaude({
      prompt: 'Hi',
      cwd: world.project,
      home: world.home,
      baseUrl: supervisor.url,
      pluginDir: PLUGIN_ROOT,
      allowedTools: ['mcp__plugin_delegate_workers__hook_answer'],
      env: { DELEGATE_HOME: world.dataHome },
    });
    expect(run.exitCode, run.stderr).toBe(0);
    const called = toolResults(supervisor.requests[1]!).get('toolu_hook');
    expect(called?.isError).toBe(true);
    expect(called?.text).toMatch(/no such tool/i);
  });

  it('puts the SessionStart briefing into the supervisor context: its session’s task awaiting review, another’s counted', async () => {
    world.writeConfig({
      profiles: {
        local: {
          format: 'openai',
          baseUrl: 'http://127.0.0.1:11434/v1',
          model: 'q',
          local: true,
          use: 'private work',
        },
      },
    });
    const session = '5a0b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d';
    const ended = { project: world.project, state: 'done', verdict: 'passed' };
    writeJobFixture(world.dataHome, { id: 't_review1', ...ended, session });
    writeJobFixture(world.dataHome, { id: 't_theirs1', ...ended, session: 'another-session' });
    supervisor = await startFakeProvider({ respond: byAssistantTurn([{ text: 'Hello.' }]) });
    const run = await runClaude({
      prompt: 'Hi',
      cwd: world.project,
      home: world.home,
      baseUrl: supervisor.url,
      pluginDir: PLUGIN_ROOT,
      extraArgs: ['--session-id', session],
      env: { DELEGATE_HOME: world.dataHome },
    });
    expect(run.exitCode, run.stderr).toBe(0);
    const firstRequest = JSON.stringify(supervisor.requests[0]!.body);
    expect(firstRequest).toContain('Workers ready: local — private work.');
    expect(firstRequest).toContain('t_review1 done (passed), not reviewed → task_result t_review1');
    expect(firstRequest).toContain("Not this session's: 1 task of other sessions here");
    expect(firstRequest).not.toContain('t_theirs1');
  });
});
