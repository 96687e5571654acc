/**
 * task_start as a native background task in the real, pinned Claude Code (interactive, in a
 * pseudo-terminal: only the interactive CLI declares the MCP tasks extension, see
 * docs/design/native-mcp-tasks.md §2.2). The supervisor model is a fake API scripted by what
 * Claude Code tells it; the worker is a fake provider.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { storedKey } from '../../server/src/profiles/credentials.ts';
import { announcedPath } from '../../server/src/store/status-key.ts';
import { runClaude } from '../helpers/claude-cli.ts';
import { startInteractiveClaude, type InteractiveClaude } from '../helpers/claude-interactive.ts';
import {
  byAssistantTurn,
  startFakeProvider,
  type FakeProvider,
  type FakeReply,
  type RecordedRequest,
} from '../helpers/fake-provider.ts';
import { BROKEN_ADD_PROJECT, FIXED_ADD, initRepository } from '../helpers/git-project.ts';
import { PLUGIN_ROOT } from '../helpers/mcp-server.ts';
import {
  killQuietly,
  liveProcesses,
  settleWorkers,
  taskProcessesLeft,
} from '../helpers/processes.ts';
import { toolName } from '../helpers/supervisor.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';
import { scaledMs, settle } from '../helpers/timing.ts';
import { waitFor } from '../helpers/wait.ts';

let world: TempEnv;
let worker: FakeProvider | undefined;
let supervisor: FakeProvider | undefined;
let session: InteractiveClaude | undefined;
beforeEach(() => {
  world = createTempEnv();
  initRepository(world.project, BROKEN_ADD_PROJECT);
});
afterEach(async () => {
  if (session)
    console.info(`screen (plain, last 3000 chars):\n${plain(session.screen()).slice(-3000)}`);
  session?.stop();
  session = undefined;
  await settleWorkers(world.dataHome);
  // What Claude Code started and SIGKILL of its group missed (the MCP server, the monitor).
  const leftovers = () =>
    liveProcesses(({ pid }) => {
      try {
        return readFileSync(`/proc/${pid}/environ`, 'latin1').includes(
          `DELEGATE_HOME=${world.dataHome}\0`,
        );
      } catch {
        return false;
      }
    }).filter((pid) => pid !== process.pid);
  for (const pid of leftovers()) killQuietly(pid);
  await waitFor(() => leftovers().length === 0, 10_000, 50).catch(() => undefined);
  await worker?.close();
  await supervisor?.close();
  worker = supervisor = undefined;
  world.cleanup();
});

/** The screen's text without ANSI sequences. */
const plain = (screen: string) =>
  // eslint-disable-next-line no-control-regex
  screen.replace(/\u001b\[[0-9;?]*[A-Za-z]|\u001b\][^\u0007]*\u0007|\u001b[()][A-Z0-9]/g, '');

const conversation = (request: RecordedRequest) => JSON.stringify(request.body.messages ?? []);
const sentToModel = () => (supervisor?.requests ?? []).map(conversation).join('\n');

/** A call the supervisor makes in its first turn. */
interface FirstCall {
  name: string;
  input: Record<string, unknown>;
}

const START_FIX: FirstCall = {
  name: 'task_start',
  input: { task: 'Fix add() so node test.js passes', test_command: 'node test.js' },
};

/** The supervisor: make `first`, then wait; `stop` makes it stop the task with TaskStop. */
function supervise(stop: boolean, first: FirstCall) {
  return (request: RecordedRequest): FakeReply => {
    const said = conversation(request);
    if (said.includes('<task-notification>')) return { text: 'Reviewed the task result.' };
    const background = /TaskStop with task_id \\"([A-Za-z0-9]+)\\"/.exec(said)?.[1];
    if (stop && background && !said.includes('"name":"TaskStop"'))
      return { toolUses: [{ name: 'TaskStop', input: { task_id: background } }] };
    if (said.includes('tool_result')) return { text: 'Waiting for the task.' };
    return { toolUses: [{ name: toolName(first.name), input: first.input }] };
  };
}

async function startSession(
  stop: boolean,
  extraEnv: Record<string, string> = {},
  first: FirstCall = START_FIX,
): Promise<InteractiveClaude> {
  supervisor = await startFakeProvider({ respond: supervise(stop, first) });
  const started = await startInteractiveClaude({
    cwd: world.project,
    home: world.home,
    baseUrl: supervisor.url,
    pluginDir: PLUGIN_ROOT,
    args: ['--allowedTools', toolName(first.name)],
    env: {
      DELEGATE_HOME: world.dataHome,
      DELEGATE_DISCOVERY_URLS_FOR_TEST: world.env.DELEGATE_DISCOVERY_URLS_FOR_TEST!,
      DELEGATE_TASK_POLL_MS: '500',
      DELEGATE_QUESTION_TIMEOUT_S: '120',
      // The monitor looks for a task every second, not every 15 s.
      DELEGATE_MONITOR_IDLE_S_FOR_TEST: '1',
      ...extraEnv,
    },
  });
  session = started;
  await waitFor(() => /shortcuts|❯|>/.test(plain(started.screen())), 30_000, 100).catch(
    () => undefined,
  );
  await settle(2_000);
  started.type('Delegate the fix of add()');
  await settle(500);
  started.type('\r');
  return started;
}

function writeWorkerConfig(fake: FakeProvider): void {
  world.writeConfig({
    profiles: { w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm', local: true } },
  });
}

/** A worker that first asks "Should add() take strings?", then fixes add(). */
async function startAskingWorker(): Promise<FakeProvider> {
  const asking = await startFakeProvider({
    respond: byAssistantTurn([
      {
        toolUses: [{ name: 'ask_supervisor', input: { question: 'Should add() take strings?' } }],
      },
      { toolUses: [{ name: 'write_file', input: { path: 'src/add.js', content: FIXED_ADD } }] },
      { text: 'Fixed add().' },
    ]),
  });
  writeWorkerConfig(asking);
  return asking;
}

const jobOf = (id: string) =>
  JSON.parse(readFileSync(join(world.dataHome, 'jobs', id, 'job.json'), 'utf8')) as {
    state: string;
    worker?: { pid: number };
  };

describe('task_start as a native task in the real Claude Code (interactive)', () => {
  it('becomes a background task; the worker question is answered through the form; completion starts a turn with the result', async () => {
    worker = await startAskingWorker();
    const claude = await startSession(false);

    // The call became a background task, and the model read our note naming the job.
    await waitFor(() => sentToModel().includes('started server-side task t_'), 60_000, 100);
    const id = /started server-side task (t_[a-z0-9]{6})/.exec(sentToModel())![1]!;
    expect(sentToModel()).toContain(`started server-side task ${id}, running in the background`);
    expect(sentToModel()).toContain('<mcp-server-note>');
    expect(sentToModel()).toContain(`no need to poll (task_status ${id} for details)`);

    // The worker's question is a form; typed, then Enter on the field and on Accept.
    await waitFor(() => plain(claude.screen()).includes('requests your input'), 60_000, 100);
    expect(plain(claude.screen())).toContain('Should add() take strings?');
    claude.type('Numbers only.');
    await settle(500);
    claude.type('\r');
    await settle(1_000);
    claude.type('\r');

    await waitFor(() => sentToModel().includes('<status>completed</status>'), 90_000, 200);
    const notified = sentToModel().slice(sentToModel().indexOf('<status>completed</status>'));
    expect(notified).toContain(`${id} done — verdict: passed`);
    expect(JSON.stringify(worker.requests[1]!.body.messages)).toContain('Numbers only.');
    // The monitor's watcher ran (it records what it saw) but sent no line for a native task.
    await waitFor(() => existsSync(announcedPath(world.dataHome, world.project)), 30_000, 100);
    await settle(3_000);
    expect(sentToModel()).not.toMatch(/\[delegate\] task t_/);
  });

  it('Decline in the form: the worker is told to go on alone, and the task still completes', async () => {
    worker = await startAskingWorker();
    const claude = await startSession(false);
    await waitFor(() => plain(claude.screen()).includes('requests your input'), 60_000, 100);
    // Down to the buttons, right to Decline, Enter (measured on 2.1.328).
    claude.type('\u001b[B');
    await settle(500);
    claude.type('\u001b[C');
    await settle(500);
    claude.type('\r');
    await waitFor(() => sentToModel().includes('<status>completed</status>'), 90_000, 200);
    expect(JSON.stringify(worker.requests[1]!.body.messages)).toContain(
      'The user declined to answer; proceed on your own judgement.',
    );
  });

  it('TaskStop from the model cancels the job, with no worker process left', async () => {
    worker = await startFakeProvider({ respond: () => ({ kind: 'hang' }) });
    writeWorkerConfig(worker);
    await startSession(true);
    await waitFor(() => sentToModel().includes('started server-side task t_'), 60_000, 100);
    const id = /started server-side task (t_[a-z0-9]{6})/.exec(sentToModel())![1]!;
    await waitFor(() => jobOf(id).state === 'cancelled', 60_000, 200);
    expect(jobOf(id).worker?.pid).toBeDefined();
    await waitFor(() => taskProcessesLeft(world.dataHome, id).length === 0, scaledMs(10_000));
    // The model is told the stop went out (Claude Code's own words, 2.1.328).
    await waitFor(() => sentToModel().includes('is stopped'), 30_000, 100);
  });
});

describe('provider_key and a slow delegate as native tasks in the real Claude Code (interactive)', () => {
  const KEY = 'sk-native-e2e-0123456789abcdef';

  /** Every file under `dir` whose bytes hold `text`. */
  function filesHolding(dir: string, text: string): string[] {
    const found: string[] = [];
    for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
      const path = join(entry.parentPath, entry.name);
      if (entry.isFile() && readFileSync(path).includes(text)) found.push(path);
    }
    return found;
  }

  it('provider_key: the key typed into the form is stored for its host, and the model, the transcript and every other file of Claude Code never see it', async () => {
    world.writeConfig({
      profiles: { k: { format: 'openai', baseUrl: 'http://127.0.0.1:9/v1', model: 'm' } },
    });
    const claude = await startSession(false, {}, { name: 'provider_key', input: { profile: 'k' } });
    await waitFor(() => sentToModel().includes('started server-side task c_'), 60_000, 100);
    expect(sentToModel()).toContain('provider_key is waiting for the user');
    await waitFor(() => plain(claude.screen()).includes('requests your input'), 60_000, 100);
    expect(plain(claude.screen())).toContain('Sent only to http://127.0.0.1:9');
    claude.type(KEY);
    await settle(500);
    claude.type('\r');
    await settle(1_000);
    claude.type('\r');
    await waitFor(() => sentToModel().includes('<status>completed</status>'), 60_000, 200);
    expect(storedKey(world.dataHome, 'k')?.key).toBe(KEY);
    expect(sentToModel()).not.toContain(KEY);
    // Claude Code's own files (settings, transcripts, logs) under HOME; our key store aside.
    // The scan does reach the transcript: it holds the user's prompt.
    expect(filesHolding(world.home, 'Delegate the fix of add()').length).toBeGreaterThan(0);
    const claudeFiles = filesHolding(world.home, KEY).filter(
      (path) => !path.startsWith(world.dataHome),
    );
    expect(claudeFiles).toEqual([]);
  });

  it('a delegate call still running after DELEGATE_CALL_TASK_AFTER_MS becomes a background task; its answer starts a turn', async () => {
    worker = await startFakeProvider({
      respond: () => ({ text: 'The slow summary.', delayMs: 4_000 }),
    });
    writeWorkerConfig(worker);
    await startSession(
      false,
      { DELEGATE_CALL_TASK_AFTER_MS: '1000' },
      { name: 'delegate', input: { task: 'Summarise the project' } },
    );
    await waitFor(() => sentToModel().includes('started server-side task c_'), 60_000, 100);
    expect(sentToModel()).toContain('delegate is taking a while');
    await waitFor(() => sentToModel().includes('<status>completed</status>'), 60_000, 200);
    const notified = sentToModel().slice(sentToModel().indexOf('<status>completed</status>'));
    expect(notified).toContain('The slow summary.');
  });
});

/**
 * What the user does from Claude Code's own UI: stop a task from the background-task panel,
 * and Esc ("answer later") on its question form.
 *
 * Keys measured on 2.1.328 (status bar "2 background tasks · ↓ to manage"):
 * - ↓ at the empty prompt focuses the status bar ("enter to view tasks"), Enter opens the panel:
 *   "Background / 1 active shell / ❯ ● delegate: this project's task questions… running /
 *   MCP tasks / ● plugin:delegate:workers/task_start  working · t_xxxxxx /
 *   ↑/↓ to navigate · x to stop · Enter to view · Esc to close". The plugin monitor's shell is
 *   the first row, so one more ↓ selects our task.
 * - Enter on it shows its details ("Server task: t_xxxxxx … Runs on the server, and keeps
 *   running after you exit this session. / x to stop · Enter/Space to close · Esc to go back";
 *   while it waits for an answer: "⚠ The server is waiting for your answer / x to stop ·
 *   Enter to answer · Esc to go back").
 * - x there stops it (tasks/cancel); Enter there (when waiting) brings the question form back.
 */
const DOWN = '\u001b[B';
const ENTER = '\r';
const ESC = '\u001b';

const eventsOf = (id: string) =>
  readFileSync(join(world.dataHome, 'jobs', id, 'events.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { type: string; detail: string });

/** Types `keys`, then waits until what the CLI drew since holds `text`; returns that text. */
async function press(claude: InteractiveClaude, keys: string, text: string): Promise<string> {
  const mark = claude.screen().length;
  claude.type(keys);
  await waitFor(() => plain(claude.screen().slice(mark)).includes(text), 15_000, 100);
  return plain(claude.screen().slice(mark));
}

/** From the idle prompt: open the background-task panel, select our MCP task, show its details. */
async function openTaskDetails(claude: InteractiveClaude, id: string): Promise<string> {
  await press(claude, DOWN, 'to view tas'); // "enter to view tasks", cut short when the bar is full
  const panel = await press(claude, ENTER, 'MCP tasks');
  expect(panel).toContain('plugin:delegate:workers/task_start');
  expect(panel).toContain(id);
  await settle(500);
  claude.type(DOWN); // past the plugin monitor's shell, the first row
  await settle(1_000);
  return press(claude, ENTER, 'Runs on the server, and keeps running after you exit this session.');
}

const taskId = () => /started server-side task (t_[a-z0-9]{6})/.exec(sentToModel())![1]!;

describe("a native MCP task in Claude Code's own UI (interactive)", () => {
  it('the user stops it from the background-task panel: the job is cancelled, no worker process is left', async () => {
    worker = await startFakeProvider({ respond: () => ({ kind: 'hang' }) });
    writeWorkerConfig(worker);
    const claude = await startSession(false);
    await waitFor(() => sentToModel().includes('started server-side task t_'), 60_000, 100);
    const id = taskId();
    await waitFor(() => jobOf(id).state === 'running' && !!jobOf(id).worker, 30_000, 100);
    await waitFor(() => plain(claude.screen()).includes('↓ to manage'), 30_000, 100);
    await settle(1_000);

    const details = await openTaskDetails(claude, id);
    expect(details).toContain('x to stop');
    expect(jobOf(id).state).toBe('running');
    const asked = supervisor!.requests.length;
    const stopped = claude.screen().length;
    claude.type('x');

    await waitFor(() => jobOf(id).state === 'cancelled', 30_000, 200);
    expect(jobOf(id).worker?.pid).toBeDefined();
    await waitFor(() => taskProcessesLeft(world.dataHome, id).length === 0, scaledMs(10_000));
    // The job file says cancelled a moment before its event is appended (finishTask writes the
    // state first, then the event): waited for, not read once, on a loaded machine.
    await waitFor(() => eventsOf(id).at(-1)?.type === 'state', 10_000, 100).catch(() => undefined);
    expect(eventsOf(id).at(-1)).toMatchObject({
      type: 'state',
      detail: expect.stringMatching(/^cancelled/),
    });
    // The task is gone from the panel and the status bar; no model turn is started for it.
    // ("✻ … · 1 monitor still running", was "2 background tasks still running").
    await waitFor(() => plain(claude.screen().slice(stopped)).includes('1 monitor'), 15_000, 100);
    await settle(2_000);
    expect(supervisor!.requests.length).toBe(asked);
  });

  it('Esc on the question form: nothing is answered, the task keeps waiting, and the user answers later through the panel', async () => {
    worker = await startAskingWorker();
    const claude = await startSession(false);
    await waitFor(() => plain(claude.screen()).includes('requests your input'), 60_000, 100);
    expect(plain(claude.screen())).toContain('Esc to answer later');
    // The form may come before the model has been sent task_start's answer: the id is the one
    // task in the data home.
    const ids = readdirSync(join(world.dataHome, 'jobs')).filter((name) => name.startsWith('t_'));
    expect(ids).toHaveLength(1);
    const id = ids[0]!;

    // Esc: the form closes, Claude Code sends no answer (no tasks/update reaches the job).
    const mark = claude.screen().length;
    claude.type(ESC);
    await settle(5_000); // ten polls at DELEGATE_TASK_POLL_MS=500
    expect(jobOf(id).state).toBe('needs_input');
    expect(eventsOf(id).map((event) => event.type)).not.toContain('answered');
    expect(worker.requests).toHaveLength(1);
    // The form does not come back by itself.
    expect(plain(claude.screen().slice(mark))).not.toContain('requests your input');

    // Later: the panel lists it as waiting; its details offer "Enter to answer".
    const details = await openTaskDetails(claude, id);
    expect(details).toContain('The server is waiting for your answer');
    expect(details).toContain('needs_input: "Should add() take'); // the rest wraps
    await press(claude, ENTER, 'requests your input');
    claude.type('Numbers only.');
    await settle(500);
    claude.type(ENTER);
    await settle(1_000);
    claude.type(ENTER);

    await waitFor(() => sentToModel().includes('<status>completed</status>'), 60_000, 200);
    expect(eventsOf(id)).toContainEqual(
      expect.objectContaining({ type: 'answered', detail: 'Numbers only.' }),
    );
    expect(JSON.stringify(worker.requests[1]!.body.messages)).toContain('Numbers only.');
    expect(jobOf(id).state).toBe('done');
  });
});

describe('where Claude Code declines native tasks: the plain task_start', () => {
  const declines: Array<[string, Record<string, string>]> = [
    [
      'CLAUDE_CODE_DISABLE_MCP_TASKS=1 (no tasks extension declared)',
      { CLAUDE_CODE_DISABLE_MCP_TASKS: '1' },
    ],
    [
      'MCP_PROTOCOL_NEGOTIATION=legacy (initialize, protocol 2025-11-25)',
      { MCP_PROTOCOL_NEGOTIATION: 'legacy' },
    ],
  ];
  for (const [condition, env] of declines) {
    it(`interactive with ${condition}: task_start answers with its text`, async () => {
      worker = await startFakeProvider({ respond: () => ({ text: 'Nothing to change.' }) });
      writeWorkerConfig(worker);
      await startSession(false, env);
      await waitFor(() => /poll: task_status t_[a-z0-9]{6}/.test(sentToModel()), 60_000, 100);
      expect(sentToModel()).not.toContain('started server-side task');
    });
  }

  it('headless -p (2.1.328 declares no tasks extension there): task_start answers with its text', async () => {
    worker = await startFakeProvider({ respond: () => ({ text: 'Nothing to change.' }) });
    writeWorkerConfig(worker);
    supervisor = await startFakeProvider({
      respond: byAssistantTurn([
        {
          toolUses: [
            { name: toolName('task_start'), input: { task: 'Look around', isolation: 'none' } },
          ],
        },
        { text: 'Started.' },
      ]),
    });
    const run = await runClaude({
      prompt: 'Delegate a look around',
      cwd: world.project,
      home: world.home,
      baseUrl: supervisor.url,
      pluginDir: PLUGIN_ROOT,
      allowedTools: [toolName('task_start')],
      env: {
        DELEGATE_HOME: world.dataHome,
        DELEGATE_DISCOVERY_URLS_FOR_TEST: world.env.DELEGATE_DISCOVERY_URLS_FOR_TEST!,
      },
      timeoutMs: 90_000,
    });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(sentToModel()).toMatch(/t_[a-z0-9]{6} (queued|running|done)[^"]*poll: task_status t_/);
    expect(sentToModel()).not.toContain('started server-side task');
  });
});
