/**
 * Two real, interactive Claude Code sessions in one project, sharing one HOME and one data home
 * as a user's two terminals do. Session 2's scripted supervisor starts a task; the task ends.
 * Session 2's model gets a turn for it; session 1's model gets none, though its monitor runs and
 * watches the same project. Each status line speaks of its own session's tasks.
 */
import { spawnSync } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readJobSummaries } from '../../server/src/store/job-file.ts';
import { startInteractiveClaude, type InteractiveClaude } from '../helpers/claude-interactive.ts';
import { plainScreen, processesWithEnv, sessionOfProcess } from '../helpers/claude-processes.ts';
import { CLI_BUNDLE } from '../helpers/cli-process.ts';
import {
  startFakeProvider,
  type FakeProvider,
  type FakeReply,
  type RecordedRequest,
} from '../helpers/fake-provider.ts';
import { BROKEN_ADD_PROJECT, FIXED_ADD, initRepository } from '../helpers/git-project.ts';
import { PLUGIN_ROOT } from '../helpers/mcp-server.ts';
import { killQuietly, settleWorkers } from '../helpers/processes.ts';
import { toolName } from '../helpers/supervisor.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';
import { settle } from '../helpers/timing.ts';
import { waitFor } from '../helpers/wait.ts';

interface Session {
  claude: InteractiveClaude;
  supervisor: FakeProvider;
  /** CLAUDE_CODE_SESSION_ID of its MCP server. */
  id: string;
}

let world: TempEnv;
let worker: FakeProvider | undefined;
let sessions: Session[] = [];
beforeEach(() => {
  world = createTempEnv();
  initRepository(world.project, BROKEN_ADD_PROJECT);
});
afterEach(async () => {
  for (const [index, session] of sessions.entries()) {
    const screen = plainScreen(session.claude.screen()).slice(-1500);
    console.info(`session ${index + 1} screen (plain, last 1500 chars):\n${screen}`);
    session.claude.stop();
  }
  await settleWorkers(world.dataHome);
  // What Claude Code started and SIGKILL of its group missed (the MCP servers, the monitors).
  for (const pid of processesWithEnv(`DELEGATE_HOME=${world.dataHome}`)) killQuietly(pid);
  await Promise.all(sessions.map((session) => session.supervisor.close()));
  await worker?.close();
  sessions = [];
  worker = undefined;
  world.cleanup();
});

const conversation = (request: RecordedRequest) => JSON.stringify(request.body.messages ?? []);
const sentTo = (session: Session) => session.supervisor.requests.map(conversation).join('\n');
const servers = () => processesWithEnv(`DELEGATE_HOME=${world.dataHome}`, 'server.mjs');
const watcherSessions = () =>
  new Set(
    processesWithEnv(`DELEGATE_HOME=${world.dataHome}`, 'cli.mjs watch').map(sessionOfProcess),
  );

/** Session 2's supervisor: starts the task, then waits; reads the result when told it ended. */
function startsTheTask(request: RecordedRequest): FakeReply {
  const said = conversation(request);
  if (said.includes('<task-notification>')) return { text: 'Reviewing the task result.' };
  if (said.includes('tool_result')) return { text: 'Waiting for the task.' };
  const input = { task: 'Fix add() so node test.js passes', test_command: 'node test.js' };
  return { toolUses: [{ name: toolName('task_start'), input }] };
}

/** A worker that fixes add() and then holds its last answer until `release` is called. */
async function startHeldWorker(): Promise<{ release: () => void }> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  worker = await startFakeProvider({
    respond: async (request) => {
      const turn = (request.body.messages as Array<{ role: string }>).filter(
        (message) => message.role === 'assistant',
      ).length;
      if (turn === 0)
        return {
          toolUses: [{ name: 'write_file', input: { path: 'src/add.js', content: FIXED_ADD } }],
        };
      await released;
      return { text: 'Fixed add().' };
    },
  });
  world.writeConfig({
    profiles: { w: { format: 'openai', baseUrl: worker.openaiBaseUrl, model: 'm', local: true } },
  });
  return { release };
}

/** Starts an interactive session with its own fake supervisor; waits for its MCP server. */
async function openSession(
  respond: (request: RecordedRequest) => FakeReply,
  env: Record<string, string>,
  args: string[] = [],
): Promise<Session> {
  const supervisor = await startFakeProvider({ respond });
  const known = new Set(servers().map(sessionOfProcess));
  const claude = await startInteractiveClaude({
    cwd: world.project,
    home: world.home,
    baseUrl: supervisor.url,
    pluginDir: PLUGIN_ROOT,
    args,
    env: {
      DELEGATE_HOME: world.dataHome,
      DELEGATE_DISCOVERY_URLS_FOR_TEST: world.env.DELEGATE_DISCOVERY_URLS_FOR_TEST!,
      DELEGATE_TASK_POLL_MS: '500',
      // The monitor looks for a task of the project every second, not every 15 s.
      DELEGATE_MONITOR_IDLE_S_FOR_TEST: '1',
      ...env,
    },
  });
  let id: string | undefined;
  const session = { claude, supervisor, id: '' };
  sessions.push(session);
  await waitFor(
    () =>
      (id = servers()
        .map(sessionOfProcess)
        .find((one) => one && !known.has(one))) !== undefined,
    60_000,
    100,
  );
  session.id = id!;
  await waitFor(() => /shortcuts|❯|>/.test(plainScreen(claude.screen())), 30_000, 100).catch(
    () => undefined,
  );
  await settle(2_000);
  return session;
}

describe('two Claude Code sessions in one project', () => {
  it.each([
    [
      'through the monitor (native MCP tasks off)',
      { CLAUDE_CODE_DISABLE_MCP_TASKS: '1' },
      (id: string) => `<event>[delegate] task ${id} done: verdict passed`,
    ],
    [
      'as a native background task (the interactive default)',
      {},
      () => '<status>completed</status>',
    ],
  ])(
    "%s: session 2's task ends; its model gets a turn, session 1's none",
    async (_path, env, endNotice) => {
      const install = spawnSync(process.execPath, [CLI_BUNDLE, 'statusline', 'install'], {
        env: world.env,
        encoding: 'utf8',
      });
      expect(install.status, install.stderr).toBe(0);
      const { release } = await startHeldWorker();
      const one = await openSession(() => ({ text: 'Session one here.' }), env);
      const two = await openSession(startsTheTask, env, ['--allowedTools', toolName('task_start')]);
      expect(two.id).not.toBe(one.id);

      two.claude.type('Delegate the fix of add()');
      await settle(500);
      two.claude.type('\r');
      let taskId = '';
      await waitFor(() => {
        taskId = readJobSummaries(world.dataHome).find((job) => job.session === two.id)?.id ?? '';
        return taskId !== '' && (worker?.requests.length ?? 0) >= 2;
      }, 60_000);
      // Claude Code's own session id is the one the server recorded on the task.
      expect(two.supervisor.requests[0]!.headers['x-claude-code-session-id']).toBe(two.id);
      // Both monitors now watch the project (a task is on its status lines).
      await waitFor(() => watcherSessions().size === 2, 30_000, 100);
      expect(watcherSessions()).toEqual(new Set([one.id, two.id]));
      // While it runs, each status line speaks of its own session's tasks.
      await waitFor(
        () => plainScreen(two.claude.screen()).includes(`delegate: ${taskId} ·`),
        30_000,
      );
      await waitFor(
        () => plainScreen(one.claude.screen()).includes('delegate: +1 other session'),
        30_000,
      );
      expect(plainScreen(one.claude.screen())).not.toContain(taskId);

      release();
      await waitFor(() => sentTo(two).includes(endNotice(taskId)), 60_000, 200);
      expect(readJobSummaries(world.dataHome).find((job) => job.id === taskId)).toMatchObject({
        state: 'done',
        verdict: 'passed',
      });
      // Time for session 1's monitor (and Claude Code) to have spoken, had either meant to.
      await settle(5_000);
      expect(one.supervisor.requests).toHaveLength(0);
      expect(plainScreen(one.claude.screen())).not.toContain(taskId);
      expect(sentTo(two).split(endNotice(taskId)).length).toBeGreaterThan(1);
    },
  );
});

describe('one Claude Code session after /clear', () => {
  it('a task its server starts after /clear is still its own: on the status line, and its end starts a turn', async () => {
    const install = spawnSync(process.execPath, [CLI_BUNDLE, 'statusline', 'install'], {
      env: world.env,
      encoding: 'utf8',
    });
    expect(install.status, install.stderr).toBe(0);
    const { release } = await startHeldWorker();
    const one = await openSession(startsTheTask, { CLAUDE_CODE_DISABLE_MCP_TASKS: '1' }, [
      '--allowedTools',
      toolName('task_start'),
    ]);
    one.claude.type('/clear');
    await settle(800);
    one.claude.type('\r');
    await settle(3_000);
    one.claude.type('Delegate the fix of add()');
    await settle(500);
    one.claude.type('\r');
    let taskId = '';
    await waitFor(() => {
      taskId = readJobSummaries(world.dataHome).find((job) => job.session === one.id)?.id ?? '';
      return taskId !== '' && (worker?.requests.length ?? 0) >= 2;
    }, 60_000);
    // The conversation has a new id now; the server (and so the task) kept the first one.
    const conversationId = one.supervisor.requests[0]!.headers['x-claude-code-session-id'];
    expect(conversationId).toMatch(/^[0-9a-f-]{36}$/);
    expect(conversationId).not.toBe(one.id);
    await waitFor(() => plainScreen(one.claude.screen()).includes(`delegate: ${taskId} ·`), 30_000);
    expect(plainScreen(one.claude.screen())).not.toContain('other session');
    release();
    await waitFor(
      () => sentTo(one).includes(`<event>[delegate] task ${taskId} done: verdict passed`),
      60_000,
      200,
    );
  });
});
