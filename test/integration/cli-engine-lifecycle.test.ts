import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readLedger } from '../../server/src/calls/ledger.ts';
import { readJob } from '../../server/src/store/job-store.ts';
import { createCliWorld, type CliWorld } from '../helpers/cli-engine-world.ts';
import { startFakeProvider, type FakeProvider } from '../helpers/fake-provider.ts';
import { startServer, type ServerHandle } from '../helpers/mcp-server.ts';
import { endTaskTest } from '../helpers/processes.ts';
import { pollTaskStatus, taskIdOf } from '../helpers/wait.ts';

let world: CliWorld;
let server: ServerHandle | undefined;
let fake: FakeProvider | undefined;
beforeEach(() => {
  world = createCliWorld();
  world.writeConfig({
    sandbox: 'off',
    profiles: { cc: { format: 'claude-cli', model: 'sonnet' } },
  });
});
afterEach(async () => {
  await endTaskTest(world, server);
  server = undefined;
  await fake?.close();
  fake = undefined;
});

// A stand-in `claude`: its first run leaves add() wrong (a * b), the next one fixes it. Each
// run reports the file it wrote and its own cost, the way Claude Code's stream-json does.
const TWO_ATTEMPTS = [
  '#!/bin/sh',
  'if grep -q "a \\* b" src/add.js; then',
  "  echo 'exports.add = (a, b) => a + b;' > src/add.js; cost=0.5; said=fixed",
  'else',
  "  echo 'exports.add = (a, b) => a * b;' > src/add.js; cost=0.25; said=tried",
  'fi',
  'printf \'{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Write","input":{"file_path":"%s/src/add.js"}}]}}\\n\' "$PWD"',
  'printf \'{"type":"result","result":"%s","total_cost_usd":%s}\\n\' "$said" "$cost"',
  '',
].join('\n');

/** Starts a task with the stand-in CLI and waits for its end: its id and task_result's text. */
async function runCliTask(input: Record<string, unknown>): Promise<{ id: string; result: string }> {
  world.writeBinary('claude', TWO_ATTEMPTS);
  server = await startServer(world.env);
  const started = await server.callText('task_start', {
    task: 'Fix add',
    test_command: 'node test.js',
    ...input,
  });
  const id = taskIdOf(started.text);
  await pollTaskStatus(server, id, /done|failed|timeout|lost/, 30_000);
  const { text } = await server.callText('task_result', { task_id: id });
  return { id, result: text };
}

describe('a CLI task on the shared task lifecycle', () => {
  it('records steps, files and the cost of every run; a failing test run goes to a new run', async () => {
    const { id } = await runCliTask({});
    const job = readJob(world.dataHome, id);
    expect(job.state, job.error).toBe('done');
    expect(job.summary).toBe('fixed');
    expect(job.verification?.exitCode).toBe(0);
    expect(job.failedAttempts).toHaveLength(1);
    expect(job.filesTouched).toEqual(['src/add.js']);
    expect(job.step).toBe(2);
    expect(job.costUsd).toBeCloseTo(0.75);
    expect(job.childPgids ?? []).toEqual([]);
    const runs = readLedger(world.dataHome).filter((line) => line.taskId === id);
    expect(runs.map((line) => [line.profile, line.outcome, line.costUsd])).toEqual([
      ['cc', 'ok', 0.25],
      ['cc', 'ok', 0.5],
    ]);
  });

  it('is reviewed like a builtin task: a reviewer on an API profile grades its diff against the definition of done', async () => {
    fake = await startFakeProvider({
      respond: [{ text: 'VERDICT: pass\n- add() adds: met (src/add.js:1)' }],
    });
    world.writeConfig({
      sandbox: 'off',
      defaultProfile: 'cc',
      profiles: {
        cc: { format: 'claude-cli', model: 'sonnet' },
        api: {
          format: 'openai',
          baseUrl: fake.openaiBaseUrl,
          model: 'reviewer-model',
          local: true,
        },
      },
    });
    const { id, result } = await runCliTask({
      definition_of_done: 'add() returns the sum of its arguments',
    });
    expect(result).toContain('review (api, reviewer-model) against the definition of done — pass');
    expect(fake.requests).toHaveLength(1);
    const sent = JSON.stringify(fake.requests[0]?.body);
    expect(sent).toContain('add() returns the sum of its arguments');
    expect(sent).toContain('a + b');
    expect(sent).toContain('node test.js');
    expect(sent).not.toMatch(/"name":"(write_file|edit_file|run_bash)"/);
    expect(readJob(world.dataHome, id).review?.verdict).toBe('pass');
  });

  it('says it was not reviewed when no profile calls a model API', async () => {
    const { result } = await runCliTask({ definition_of_done: 'add() returns the sum' });
    expect(result).toContain(
      'no review: every profile that could review this task is a CLI engine',
    );
  });
});
