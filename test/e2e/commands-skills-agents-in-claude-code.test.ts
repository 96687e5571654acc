// The plugin's commands, skills and supervisor subagent inside the real Claude Code: listed under
// the plugin's namespace, expanded into the prompt, and able to call the MCP tools.
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runClaude, type ClaudeRun } from '../helpers/claude-cli.ts';
import {
  byAssistantTurn,
  startFakeProvider,
  type FakeProvider,
  type FakeReply,
  type RecordedRequest,
} from '../helpers/fake-provider.ts';
import { BROKEN_ADD_PROJECT, FIXED_ADD, initRepository } from '../helpers/git-project.ts';
import { PLUGIN_ROOT } from '../helpers/mcp-server.ts';
import { settleWorkers } from '../helpers/processes.ts';
import { toolName } from '../helpers/supervisor.ts';
import { createTempEnv, writeJobFixture, type TempEnv } from '../helpers/temp-env.ts';

const COMMANDS = [
  'delegate:delegate',
  'delegate:tasks',
  'delegate:review',
  'delegate:providers',
  'delegate:provider-add',
  'delegate:provider-key',
  'delegate:usage',
  'delegate:statusline',
];
/** A line of the supervisor subagent's system prompt (agents/delegate-supervisor.md). */
const SUBAGENT_MARKER = 'You supervise a delegation for the main session';

let world: TempEnv;
let supervisor: FakeProvider | undefined;
let worker: FakeProvider | undefined;
beforeEach(() => {
  world = createTempEnv();
});
afterEach(async () => {
  await settleWorkers(world.dataHome);
  await supervisor?.close();
  await worker?.close();
  supervisor = worker = undefined;
  world.cleanup();
});

function run(prompt: string, allowedTools: string[] = []): Promise<ClaudeRun> {
  return runClaude({
    prompt,
    cwd: world.project,
    home: world.home,
    baseUrl: supervisor!.url,
    pluginDir: PLUGIN_ROOT,
    allowedTools,
    env: {
      DELEGATE_HOME: world.dataHome,
      DELEGATE_DISCOVERY_URLS_FOR_TEST: world.env.DELEGATE_DISCOVERY_URLS_FOR_TEST!,
    },
    timeoutMs: 90_000,
  });
}

/** Every tool_use of a request's conversation with its result, in order. */
function toolCalls(
  request: RecordedRequest,
): Array<{ name: string; text: string; isError: boolean }> {
  const names = new Map<string, string>();
  const calls: Array<{ name: string; text: string; isError: boolean }> = [];
  for (const message of request.body?.messages ?? []) {
    if (!Array.isArray(message.content)) continue;
    for (const block of message.content) {
      if (block.type === 'tool_use') names.set(block.id, block.name);
      if (block.type !== 'tool_result') continue;
      const text =
        typeof block.content === 'string'
          ? block.content
          : (block.content ?? []).map((part: { text?: string }) => part.text ?? '').join('');
      calls.push({ name: names.get(block.tool_use_id) ?? '?', text, isError: !!block.is_error });
    }
  }
  return calls;
}

const conversation = (request: RecordedRequest): string => JSON.stringify(request.body.messages);
const isSubagent = (request: RecordedRequest): boolean =>
  JSON.stringify(request.body.system).includes(SUBAGENT_MARKER);

describe('commands, skills and the supervisor subagent in the real Claude Code', () => {
  it('lists every command, skill and agent under the plugin namespace; the Skill tool loads a skill', async () => {
    supervisor = await startFakeProvider({
      respond: byAssistantTurn([
        { toolUses: [{ name: 'Skill', input: { skill: 'delegate:supervise-tasks' } }] },
        { text: 'Loaded.' },
      ]),
    });
    const result = await run('How do I supervise tasks?');
    expect(result.exitCode, result.stderr).toBe(0);
    expect(supervisor.unscripted).toEqual([]);
    for (const command of COMMANDS) expect(result.init?.slash_commands).toContain(command);
    expect(result.init?.skills).toEqual(
      expect.arrayContaining(['delegate:delegate', 'delegate:supervise-tasks']),
    );
    expect(result.init?.agents).toContain('delegate:delegate-supervisor');
    // The model sees each with its description.
    const listing = conversation(supervisor.requests[0]!);
    expect(listing).toContain('delegate:supervise-tasks: How to supervise delegate tasks');
    expect(listing).toContain('delegate:tasks: Show this project');
    expect(listing).toContain('delegate:delegate-supervisor: Runs a whole delegation');
    const [skill] = toolCalls(supervisor.requests[1]!);
    expect(skill, skill?.text).toMatchObject({ name: 'Skill', isError: false });
    expect(conversation(supervisor.requests[1]!)).toContain('# Supervising delegate tasks');
  });

  it('/delegate:delegate <task> expands the delegate skill with the task', async () => {
    supervisor = await startFakeProvider({ respond: byAssistantTurn([{ text: 'On it.' }]) });
    const result = await run('/delegate:delegate summarise logs/big.log');
    expect(result.exitCode, result.stderr).toBe(0);
    const prompt = conversation(supervisor.requests[0]!);
    expect(prompt).toContain('<command-name>/delegate:delegate</command-name>');
    expect(prompt).toContain('Task from the user, if any: summarise logs/big.log');
    expect(prompt).toContain('## Which profile');
  });

  it('/delegate:tasks expands and its pre-approved task_status runs without --allowedTools', async () => {
    writeJobFixture(world.dataHome, {
      id: 't_cmd001',
      project: world.project,
      state: 'done',
      verdict: 'passed',
      task: 'Fix add()',
      createdAt: new Date().toISOString(),
      updatedAt: new Date().toISOString(),
      lastEventAt: new Date().toISOString(),
      isolation: 'none',
      workdir: world.project,
      step: 3,
      maxTurns: 40,
      timeoutS: 1800,
      idleTimeoutS: 300,
      questionTimeoutS: 600,
      costUsd: 0.012,
      filesTouched: ['src/add.js'],
    });
    supervisor = await startFakeProvider({
      respond: (request) =>
        conversation(request).includes('Show the delegate tasks of this project') &&
        toolCalls(request).length === 0
          ? { toolUses: [{ name: toolName('task_status'), input: {} }] }
          : { text: 't_cmd001 finished and passed: /delegate:review t_cmd001' },
    });
    const result = await run('/delegate:tasks');
    expect(result.exitCode, result.stderr).toBe(0);
    expect(supervisor.unscripted).toEqual([]);
    expect(conversation(supervisor.requests[0]!)).toContain(
      '<command-name>/delegate:tasks</command-name>',
    );
    const [status] = toolCalls(supervisor.requests[1]!);
    expect(status).toMatchObject({ name: toolName('task_status'), isError: false });
    expect(status!.text).toMatch(/^t_cmd001 done passed · 1 file · \$0\.012 → task_result/);
    expect(result.result?.permission_denials ?? []).toEqual([]);
  });

  it('/delegate:statusline runs the bundled CLI by its absolute path, pre-approved', async () => {
    const cli = join(PLUGIN_ROOT, 'bin', 'delegate');
    supervisor = await startFakeProvider({
      respond: byAssistantTurn([
        {
          toolUses: [
            {
              name: 'Bash',
              input: { command: `"${cli}" statusline install`, description: 'install' },
            },
          ],
        },
        { text: 'Done.' },
      ]),
    });
    const result = await run('/delegate:statusline');
    expect(result.exitCode, result.stderr).toBe(0);
    expect(conversation(supervisor.requests[0]!)).toContain(
      JSON.stringify(`"${cli}" statusline install`).slice(1, -1),
    );
    const [bash] = toolCalls(supervisor.requests[1]!);
    expect(bash?.name).toBe('Bash');
    // The CLI itself answered (whatever it said): the call was not held for approval.
    expect(bash!.text).not.toMatch(/requires approval|haven't granted/);
    expect(result.result?.permission_denials ?? []).toEqual([]);
  });

  it('the delegate-supervisor subagent runs a task through the MCP tools and hands back only the outcome', async () => {
    initRepository(world.project, BROKEN_ADD_PROJECT);
    worker = await startFakeProvider({
      respond: byAssistantTurn([
        { toolUses: [{ name: 'write_file', input: { path: 'src/add.js', content: FIXED_ADD } }] },
        { text: 'Fixed add().' },
      ]),
    });
    world.writeConfig({
      profiles: {
        w: { format: 'openai', baseUrl: worker.openaiBaseUrl, model: 'm', local: true },
      },
    });
    supervisor = await startFakeProvider({
      respond: (request) => (isSubagent(request) ? subagentTurn(request) : mainTurn(request)),
    });
    const result = await run(
      'Delegate the fix of add()',
      ['task_start', 'task_status', 'task_result'].map(toolName),
    );
    expect(result.exitCode, result.stderr).toBe(0);
    expect(supervisor.unscripted).toEqual([]);

    const subRequests = supervisor.requests.filter(isSubagent);
    expect(subRequests.length).toBeGreaterThanOrEqual(4);
    // On the cheaper model its frontmatter names, with the delegate tools it lists and no others.
    expect(subRequests[0]!.body.model).toMatch(/sonnet/);
    const subTools = subRequests[0]!.body.tools.map((tool: { name: string }) => tool.name);
    expect(subTools).toEqual(expect.arrayContaining(['task_start', 'task_result'].map(toolName)));
    for (const forbidden of ['provider_key', 'provider_set', 'provider_remove', 'task_cleanup'])
      expect(subTools).not.toContain(toolName(forbidden));
    const subCalls = toolCalls(subRequests.at(-1)!);
    expect(subCalls.map((call) => call.name)).toEqual(
      expect.arrayContaining(['task_start', 'task_status', 'task_result'].map(toolName)),
    );
    expect(subCalls.every((call) => !call.isError)).toBe(true);
    expect(subCalls.at(-1)!.text).toContain('verdict: passed');

    // The main session saw the Agent call and its outcome, none of the tool traffic.
    const mainCalls = toolCalls(supervisor.requests.at(-1)!);
    expect(mainCalls.map((call) => call.name)).toEqual(['Agent']);
    expect(mainCalls[0]!.text).toMatch(/t_[a-z0-9]{6} done · tests passed/);
    expect(mainCalls[0]!.text).not.toContain('preflight:');
    expect(result.result?.result).toContain('The fix is ready to merge.');
  });
});

function mainTurn(request: RecordedRequest): FakeReply {
  if (toolCalls(request).length > 0) return { text: 'The fix is ready to merge.' };
  return {
    toolUses: [
      {
        name: 'Agent',
        input: {
          subagent_type: 'delegate:delegate-supervisor',
          description: 'Delegate the add() fix',
          prompt: 'Fix add() in src/add.js; test command: node test.js',
          run_in_background: false,
        },
      },
    ],
  };
}

/** The subagent's model: start, poll until done, read the result, report one line. */
function subagentTurn(request: RecordedRequest): FakeReply {
  const calls = toolCalls(request);
  const last = calls.at(-1);
  const taskId = /\bt_[a-z0-9]{6}\b/.exec(calls[0]?.text ?? '')?.[0];
  const call = (name: string, input: Record<string, unknown>, delayMs = 0): FakeReply => ({
    toolUses: [{ name: toolName(name), input }],
    delayMs,
  });
  if (!last)
    return call('task_start', { task: 'Fix add() in src/add.js', test_command: 'node test.js' });
  if (last.name === toolName('task_result')) {
    const verdict = /verdict: (\w+)/.exec(last.text)?.[1] ?? 'none';
    return { text: `${taskId} done · tests ${verdict} · review none · 1 files` };
  }
  if (/ done /.test(last.text)) return call('task_result', { task_id: taskId });
  return call('task_status', { task_ids: [taskId] }, 300);
}
