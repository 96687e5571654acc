/**
 * Tasks that check their own work: failing tests go back to the worker (fix until green), a
 * reviewer on another profile grades the diff against the definition of done, and a task
 * stops at its cost cap with its work kept.
 */
import { describe, expect } from 'vitest';
import { readLedger } from '../../server/src/calls/ledger.ts';
import { byAssistantTurn, type FakeReply, type RecordedRequest } from '../helpers/fake-provider.ts';
import { FIXED_ADD, git } from '../helpers/git-project.ts';
import type { ServerHandle } from '../helpers/mcp-server.ts';
import { taskTest, type ProviderLauncher } from '../helpers/task-world.ts';
import { pollTaskStatus, taskIdOf } from '../helpers/wait.ts';

const use = (name: string, input: Record<string, unknown>): FakeReply => ({
  toolUses: [{ name, input }],
});

/** Worker requests (model `worker-model`) answered by turn; reviewer requests by theirs. */
function scripted(worker: FakeReply[], reviewer: FakeReply[] = []) {
  const forWorker = byAssistantTurn(worker);
  const forReviewer = byAssistantTurn(reviewer);
  return (request: RecordedRequest) =>
    request.body?.model === 'review-model' ? forReviewer(request) : forWorker(request);
}

const workerRequests = (provider: ProviderLauncher) =>
  provider.started!.requests.filter((request) => request.body?.model === 'worker-model');

/** Profile `w` (local, model worker-model) is the default; `extra` adds to or replaces settings. */
const it = taskTest.extend(
  'startWith',
  ({ world, provider, server }) =>
    async (
      respond: (request: RecordedRequest) => FakeReply,
      extra: (baseUrl: string) => object = () => ({}),
    ) => {
      const fake = await provider.start({ respond });
      const baseUrl = fake.openaiBaseUrl;
      world.writeConfig({
        defaultProfile: 'w',
        profiles: { w: { format: 'openai', baseUrl, model: 'worker-model', local: true } },
        ...extra(baseUrl),
      });
      return server.start(world.env);
    },
);

async function runToEnd(handle: ServerHandle, input: Record<string, unknown>) {
  const started = await handle.callText('task_start', input);
  expect(started.isError, started.text).toBe(false);
  const id = taskIdOf(started.text);
  const status = await pollTaskStatus(handle, id, /done|failed|lost|timeout/);
  const result = await handle.callText('task_result', { task_id: id });
  return { id, status, result: result.text };
}

describe('fix until green', () => {
  it('a failing test run goes back to the worker, which fixes it on its second attempt: passed', async ({
    startWith,
    provider,
  }) => {
    const handle = await startWith(
      scripted([
        use('write_file', { path: 'notes.md', content: 'looked at add\n' }),
        { text: 'I reviewed add() and left notes; it should be fine.' },
        use('write_file', { path: 'src/add.js', content: FIXED_ADD }),
        { text: 'Fixed add() to add instead of subtract; node test.js passes.' },
      ]),
    );
    const { status, result } = await runToEnd(handle, {
      task: 'Fix add() so the test passes',
      test_command: 'node test.js',
    });
    expect(status).toMatch(/done passed/);
    expect(result).toContain('verdict: passed');
    expect(result).toContain('fix rounds: the tests failed 1 time before (exit 1)');
    expect(result).toContain('summary:\n  Fixed add() to add');
    // The worker's third request carried the failing run's facts, in the same conversation.
    const feedback = JSON.stringify(workerRequests(provider)[2]!.body.messages);
    expect(feedback).toContain('node test.js');
    expect(feedback).toContain('add(2, 3) should be 5');
    expect(feedback).toContain('I reviewed add() and left notes');
    expect(workerRequests(provider)).toHaveLength(4);
  });

  it('a worker that never fixes it ends failed after the configured rounds', async ({
    startWith,
    provider,
  }) => {
    const handle = await startWith(
      scripted([
        { text: 'The code looks right to me; nothing to change.' },
        { text: 'I still believe the code is right; the test must be wrong.' },
        { text: 'Unreachable: only one fix round is configured.' },
      ]),
      () => ({ tasks: { fixRounds: 1 } }),
    );
    const { status, result } = await runToEnd(handle, {
      task: 'Fix add()',
      test_command: 'node test.js',
    });
    expect(status).toMatch(/done failed/);
    expect(result).toContain('test command: node test.js → exit 1');
    expect(result).toContain('fix rounds: the tests failed 1 time before (exit 1)');
    expect(workerRequests(provider)).toHaveLength(2);
  });

  it('fixRounds 0 verifies once, as before', async ({ startWith, provider }) => {
    const handle = await startWith(scripted([{ text: 'Nothing changed, all good.' }]), () => ({
      tasks: { fixRounds: 0 },
    }));
    const { result } = await runToEnd(handle, { task: 'Look', test_command: 'node test.js' });
    expect(result).toContain('verdict: failed');
    expect(result).not.toContain('fix rounds');
    expect(workerRequests(provider)).toHaveLength(1);
  });
});

describe('rubric review', () => {
  it('a reviewer on another profile grades the diff against the definition of done', async ({
    startWith,
    provider,
  }) => {
    const handle = await startWith(
      scripted(
        [
          use('write_file', { path: 'src/add.js', content: FIXED_ADD }),
          { text: 'Fixed add(); node test.js passes.' },
        ],
        [
          use('read_file', { path: 'src/add.js' }),
          {
            text:
              'VERDICT: fail\n- add() adds numbers: met (src/add.js:1)\n' +
              '- strings are rejected: NOT met, add("a", 1) returns "a1" (src/add.js:1)',
          },
        ],
      ),
      (baseUrl) => ({
        profiles: {
          w: { format: 'openai', baseUrl, model: 'worker-model', local: true },
          rev: { format: 'openai', baseUrl, model: 'review-model', local: true },
        },
      }),
    );
    const { status, result } = await runToEnd(handle, {
      task: 'Fix add()',
      test_command: 'node test.js',
      definition_of_done: 'add() adds two numbers and throws on strings',
    });
    expect(status).toMatch(/done passed · review fail/);
    expect(result).toContain('verdict: passed');
    expect(result).toContain('review (rev, review-model) against the definition of done — fail');
    expect(result).toContain('strings are rejected: NOT met');

    const reviews = provider.started!.requests.filter(
      (request) => request.body?.model === 'review-model',
    );
    expect(reviews).toHaveLength(2);
    const first = JSON.stringify(reviews[0]!.body);
    expect(first).toContain('add() adds two numbers and throws on strings');
    expect(first).toContain('+exports.add = (a, b) => a + b;');
    expect(first).toContain('exited 0');
    // Read-only tools only: the reviewer cannot change the work it grades.
    const tools = (reviews[0]!.body.tools as Array<{ function: { name: string } }>).map(
      (tool) => tool.function.name,
    );
    expect(tools).toEqual(expect.arrayContaining(['read_file', 'grep', 'list_files']));
    expect(tools).not.toContain('write_file');
    expect(tools).not.toContain('run_bash');
  });
});

describe('budget mid-run', () => {
  it('a task stops at its cost cap: settled spend within it, work salvaged, reason in the result', async ({
    startWith,
    world,
    provider,
  }) => {
    const steps: FakeReply[] = [use('write_file', { path: 'partial.txt', content: 'step 1\n' })];
    for (let index = 0; index < 30; index += 1) steps.push(use('list_files', { pattern: '*' }));
    // $4 per million tokens either way: a ~5.5 KB request reserves ~2.2 cents of input (a token
    // per byte sent) and bills ~0.6 cents (the fake counts a token per 4 bytes).
    const price = { inputPerMTok: 4, outputPerMTok: 4 };
    const handle = await startWith(scripted(steps), (baseUrl) => ({
      profiles: { w: { format: 'openai', baseUrl, model: 'worker-model', price } },
    }));
    const cap = 0.05;
    const { id, status, result } = await runToEnd(handle, { task: 'Grind', budget_usd: cap });
    expect(status).toMatch(/failed: budget reached/);
    expect(result).toMatch(/error: budget reached: the task spent \$0\.0\d+ of its \$0\.05 cap/);
    expect(result).toContain('files changed (1): A partial.txt');
    expect(git(world.project, 'show', `delegate/${id}:partial.txt`)).toBe('step 1');

    const spent = readLedger(world.dataHome)
      .filter((record) => record.taskId === id)
      .reduce((total, record) => total + record.costUsd, 0);
    // It spent a good part of the cap (calls of ~0.6 cents each, growing) before it stopped.
    expect(spent).toBeGreaterThan(0.015);
    expect(spent).toBeLessThanOrEqual(cap);
    // The output allowance (8,192 tokens would cost $0.033) shrank to what was left, call by call.
    const allowances = workerRequests(provider).map((request) => Number(request.body.max_tokens));
    expect(allowances[0]).toBeLessThan(8_192);
    expect(allowances.slice(1).every((allowance, index) => allowance < allowances[index]!)).toBe(
      true,
    );
    expect(workerRequests(provider).length).toBeLessThan(steps.length);
  });
});
