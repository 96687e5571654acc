import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runScriptedAgent } from '../helpers/agent-run.ts';
import type { FakeReply } from '../helpers/fake-provider.ts';
import { taskTest } from '../helpers/task-world.ts';

let root: string;
beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'delegate-agent-')));
  writeFileSync(join(root, 'notes.txt'), 'remember the milk\n');
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('the agent loop replays Anthropic blocks it does not model', () => {
  it('sends a redacted_thinking block back unchanged in the next request of the tool loop', async () => {
    const redacted = {
      type: 'redacted_thinking',
      data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj==',
    };
    const run = await runScriptedAgent({
      format: 'anthropic',
      root,
      maxTurns: 5,
      steps: [
        {
          blocks: [redacted],
          thinking: 'Read the notes.',
          toolUses: [{ id: 'toolu_1', name: 'read_file', input: { path: 'notes.txt' } }],
        },
        { text: 'The notes say: remember the milk.' },
      ],
    });
    expect(run.outcome.summary).toBe('The notes say: remember the milk.');
    const replayed = run.requests[1]!;
    expect(replayed.body.messages[1].content).toEqual([
      redacted,
      { type: 'thinking', thinking: 'Read the notes.', signature: 'fake-signature' },
      { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'notes.txt' } },
    ]);
    expect(replayed.rawBody).toContain(JSON.stringify(redacted));
  });
});

describe('a worker’s final answer says when it was cut off or refused', () => {
  it('cut off on the last turn: the notice goes first', async () => {
    const run = await runScriptedAgent({
      root,
      maxTurns: 1,
      steps: [{ text: 'I changed a.js and', stopReason: 'length', usage: { output: 1000 } }],
    });
    expect(run.outcome.summary).toBe(
      '[cut off at 1,000 output tokens — the answer is incomplete; narrow the task or split it]\n\nI changed a.js and',
    );
  });

  it('cut off again after the nudge: the notice, the text, then the note', async () => {
    const cut: FakeReply = { text: 'So far I', stopReason: 'length', usage: { output: 1000 } };
    const run = await runScriptedAgent({ root, maxTurns: 5, steps: [cut, cut] });
    expect(run.outcome.stoppedBy).toBe('unclear');
    expect(run.outcome.summary.split('\n\n')).toEqual([
      '[cut off at 1,000 output tokens — the answer is incomplete; narrow the task or split it]',
      'So far I',
      '(The worker stopped without a clear final answer, even after a reminder.)',
    ]);
  });

  it.each([
    ['openai', { refusal: "I can't help with that." }],
    [
      'anthropic',
      { text: '', stopReason: 'refusal', stopDetails: { explanation: "I can't help with that." } },
    ],
  ] as const)('%s refusal: ends the run at once, in the model’s words', async (format, reply) => {
    const run = await runScriptedAgent({ format, root, maxTurns: 5, steps: [reply] });
    expect(run.requests).toHaveLength(1);
    expect(run.outcome).toMatchObject({
      stoppedBy: 'answer',
      summary: `[refused by the model: "I can't help with that."]`,
    });
  });

  it('content filter: ends the run at once, saying so', async () => {
    const run = await runScriptedAgent({
      root,
      maxTurns: 5,
      steps: [{ text: 'Here is', stopReason: 'content_filter' }],
    });
    expect(run.requests).toHaveLength(1);
    expect(run.outcome.summary).toMatch(/^\[content filtered: .*\]\n\nHere is$/);
  });
});

describe('tasks and reviews through the built server', () => {
  taskTest(
    'a refused task and a cut-off review are reported as such in task_result',
    async ({ world, provider, server: servers }) => {
      const fake = await provider.start({
        respond: (request): FakeReply =>
          JSON.stringify(request.body.messages).includes('Grade this change')
            ? {
                text: 'VERDICT: fail\n- the change is emp',
                stopReason: 'length',
                usage: { output: 4096 },
              }
            : { refusal: 'I will not edit this repository.' },
      });
      world.writeConfig({
        profiles: {
          w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'worker-model', local: true },
        },
      });
      const server = await servers.start(world.env);
      const { text } = await server.callText('task_start', {
        task: 'Fix add()',
        definition_of_done: 'add() adds',
        wait_s: 30,
      });
      expect(text).toContain(
        'summary:\n  [refused by the model: "I will not edit this repository."]',
      );
      expect(text).toMatch(
        /review \(w, worker-model\) against the definition of done — fail:\n {2}\[cut off at 4,096 output tokens — the answer is incomplete; narrow the task or split it\]\n/,
      );
    },
  );
});
