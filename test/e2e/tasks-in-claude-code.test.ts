import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runClaude } from '../helpers/claude-cli.ts';
import {
  byAssistantTurn,
  startFakeProvider,
  type FakeProvider,
  type FakeReply,
  type RecordedRequest,
} from '../helpers/fake-provider.ts';
import { BROKEN_ADD_PROJECT, FIXED_ADD, initRepository } from '../helpers/git-project.ts';
import { PLUGIN_ROOT } from '../helpers/mcp-server.ts';
import { toolName } from '../helpers/supervisor.ts';
import { settleWorkers } from '../helpers/processes.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';
import { runnerConfig, startSshd } from '../helpers/sshd.ts';

let world: TempEnv;
let worker: FakeProvider;
let supervisor: FakeProvider;
beforeEach(() => {
  world = createTempEnv();
  initRepository(world.project, BROKEN_ADD_PROJECT);
});
afterEach(async () => {
  await settleWorkers(world.dataHome);
  await worker?.close();
  await supervisor?.close();
  world.cleanup();
});

/** The last tool result the supervisor received, and the name of the tool that produced it. */
function lastToolResult(request: RecordedRequest): { tool?: string; text: string } {
  const messages: Array<{ role: string; content: unknown }> = request.body.messages;
  const names = new Map<string, string>();
  let last: { tool?: string; text: string } = { text: '' };
  for (const message of messages) {
    if (!Array.isArray(message.content)) continue;
    for (const block of message.content as Array<Record<string, unknown>>) {
      if (block.type === 'tool_use') names.set(block.id as string, block.name as string);
      if (block.type === 'tool_result') {
        const content = block.content;
        const text =
          typeof content === 'string'
            ? content
            : (content as Array<{ text?: string }>).map((part) => part.text ?? '').join('');
        last = { tool: names.get(block.tool_use_id as string), text };
      }
    }
  }
  return last;
}

/** The text of the first tool result (task_start's, which names the task). */
function firstToolResult(request: RecordedRequest): string {
  for (const message of request.body.messages as Array<{ content: unknown }>) {
    if (!Array.isArray(message.content)) continue;
    const block = (message.content as Array<Record<string, unknown>>).find(
      (part) => part.type === 'tool_result',
    );
    if (block) return JSON.stringify(block.content);
  }
  return '';
}

/** A supervisor that reacts to what the tools told it, as a real one would. */
const supervise = (request: RecordedRequest) => superviseWith({}, request);

/** The same, its task_start given `extra` arguments. */
function superviseWith(extra: Record<string, unknown>, request: RecordedRequest): FakeReply {
  const { tool, text } = lastToolResult(request);
  const taskId = /\bt_[a-z0-9]{6}\b/.exec(firstToolResult(request))?.[0];
  const call = (name: string, input: Record<string, unknown>, delayMs = 0): FakeReply => ({
    toolUses: [{ name: toolName(name), input }],
    delayMs,
  });
  if (!tool)
    return call('task_start', {
      task: 'Fix add() so node test.js passes',
      test_command: 'node test.js',
      ...extra,
    });
  if (tool === toolName('task_result'))
    return {
      text: `Reviewed ${taskId}: ${text.includes('verdict: passed') ? 'passed' : 'NOT passed'}.`,
    };
  if (text.includes('needs_input'))
    return call('task_answer', { task_id: taskId, answer: 'Numbers only.' });
  if (/ done /.test(text)) return call('task_result', { task_id: taskId });
  return call('task_status', { task_ids: [taskId] }, 300);
}

describe('tasks inside the real Claude Code', () => {
  it('a scripted supervisor starts a task, polls, answers its question and reads the result', async () => {
    worker = await startFakeProvider({
      respond: byAssistantTurn([
        { toolUses: [{ name: 'ask_supervisor', input: { question: 'Strings too?' } }] },
        { toolUses: [{ name: 'write_file', input: { path: 'src/add.js', content: FIXED_ADD } }] },
        { text: 'Fixed add().' },
      ]),
    });
    world.writeConfig({
      profiles: { w: { format: 'openai', baseUrl: worker.openaiBaseUrl, model: 'm', local: true } },
    });
    supervisor = await startFakeProvider({ respond: supervise });
    const run = await runClaude({
      prompt: 'Delegate the fix of add()',
      cwd: world.project,
      home: world.home,
      baseUrl: supervisor.url,
      pluginDir: PLUGIN_ROOT,
      allowedTools: ['task_start', 'task_status', 'task_answer', 'task_result'].map(toolName),
      env: { DELEGATE_HOME: world.dataHome },
      timeoutMs: 90_000,
    });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(supervisor.unscripted).toEqual([]);
    const used = supervisor.requests.map((request) => lastToolResult(request).tool).filter(Boolean);
    expect(used).toContain(toolName('task_answer'));
    expect(used.at(-1)).toBe(toolName('task_result'));
    expect(run.result?.result).toMatch(/Reviewed t_[a-z0-9]{6}: passed\./);
    expect(JSON.stringify(worker.requests[1]!.body.messages)).toContain('Numbers only.');
  });

  it('a scripted supervisor runs a task on an SSH runner: its commands and tests run there', async () => {
    const sshd = await startSshd();
    try {
      worker = await startFakeProvider({
        respond: byAssistantTurn([
          {
            toolUses: [
              {
                name: 'run_bash',
                input: { command: `sed -i 's/a - b/a + b/' src/add.js && id -un && node test.js` },
              },
            ],
          },
          { text: 'Fixed add() on the runner.' },
        ]),
      });
      world.writeConfig({
        runners: { build: runnerConfig(sshd) },
        profiles: {
          w: { format: 'openai', baseUrl: worker.openaiBaseUrl, model: 'm', local: true },
        },
      });
      supervisor = await startFakeProvider({
        respond: (request) => superviseWith({ runner: 'build' }, request),
      });
      const run = await runClaude({
        prompt: 'Delegate the fix of add() to the build runner',
        cwd: world.project,
        home: world.home,
        baseUrl: supervisor.url,
        pluginDir: PLUGIN_ROOT,
        allowedTools: ['task_start', 'task_status', 'task_result'].map(toolName),
        env: { DELEGATE_HOME: world.dataHome },
        timeoutMs: 90_000,
      });
      expect(run.exitCode, run.stderr).toBe(0);
      expect(supervisor.unscripted).toEqual([]);
      expect(run.result?.result).toMatch(/Reviewed t_[a-z0-9]{6}: passed\./);
      // What Claude Code handed the supervisor: the start on the runner, and the result from there.
      const started = firstToolResult(supervisor.requests.at(-1)!);
      expect(started).toContain(
        `commands and tests run on runner build (127.0.0.1) in ${sshd.workdir}/t_`,
      );
      const result = lastToolResult(supervisor.requests.at(-1)!);
      expect(result.tool).toBe(toolName('task_result'));
      expect(result.text).toContain(
        "runner: the worker's commands and the test command ran on build",
      );
      expect(JSON.stringify(worker.requests[1]!.body.messages)).toContain(`${sshd.user}\\nok`);
    } finally {
      await settleWorkers(world.dataHome);
      await sshd.stop();
    }
  });
});
