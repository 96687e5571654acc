import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NAIVE_CONTEXT } from '../../server/src/agent/context-policy.ts';
import { NUDGE } from '../../server/src/agent/turn-notices.ts';
import {
  LONG_RUN_TURNS,
  longRunScript,
  runScriptedAgent,
  sampleText,
} from '../helpers/agent-run.ts';
import type { FakeReply, RecordedRequest, WireFormat } from '../helpers/fake-provider.ts';

let root: string;
beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'delegate-context-')));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const use = (name: string, input: Record<string, unknown>): FakeReply => ({
  toolUses: [{ name, input }],
});

/** What a request carried, whatever the wire format: tool calls, their results, and loop notes. */
function wireView(request: RecordedRequest) {
  const calls: string[] = [];
  const results: Array<{ id: string; content: string }> = [];
  const notes: string[] = [];
  const messages: any[] = request.body.messages.filter((message: any) => message.role !== 'system');
  for (const message of messages.slice(1)) {
    if (message.role === 'tool')
      results.push({ id: message.tool_call_id, content: message.content });
    if (message.role === 'user' && typeof message.content === 'string') notes.push(message.content);
    for (const call of message.tool_calls ?? []) calls.push(call.id);
    if (!Array.isArray(message.content)) continue;
    for (const block of message.content) {
      if (block.type === 'tool_use') calls.push(block.id);
      if (block.type === 'tool_result')
        results.push({ id: block.tool_use_id, content: block.content });
      if (block.type === 'text' && message.role === 'user') notes.push(block.text);
    }
  }
  return { calls, results, notes };
}

/** Loop notes (countdown, nudge) that request `index` carried and the one before did not. */
function newNotes(requests: RecordedRequest[], index: number): string {
  const before = index > 0 ? wireView(requests[index - 1]!).notes.length : 0;
  return wireView(requests[index]!).notes.slice(before).join('\n');
}

describe('eviction over a long run', () => {
  it(`keeps the largest request bounded over ${LONG_RUN_TURNS} turns of large outputs, against the full history`, async () => {
    const steps = longRunScript(root);
    const managed = await runScriptedAgent({ steps, root, maxTurns: LONG_RUN_TURNS });
    const naive = await runScriptedAgent({
      steps,
      root,
      maxTurns: LONG_RUN_TURNS,
      contextPolicy: NAIVE_CONTEXT,
    });
    console.log(
      `largest request over ${LONG_RUN_TURNS} turns: ${managed.largestRequestBytes} bytes with the policy, ` +
        `${naive.largestRequestBytes} bytes with the full history`,
    );
    for (const run of [managed, naive]) {
      expect(run.requests).toHaveLength(LONG_RUN_TURNS);
      expect(run.outcome).toMatchObject({ stoppedBy: 'answer', turns: LONG_RUN_TURNS });
    }
    expect(managed.largestRequestBytes).toBeLessThan(128 * 1024);
    expect(naive.largestRequestBytes).toBeGreaterThan(1_500 * 1024);
    // Bounded, not just smaller: the last requests are no bigger than those early in the run.
    const sizes = managed.requests.map((request) => request.rawBody.length);
    expect(Math.max(...sizes.slice(-10))).toBeLessThan(Math.max(...sizes.slice(0, 10)) + 16 * 1024);
    const last = wireView(managed.requests.at(-1)!);
    expect(last.results).toHaveLength(LONG_RUN_TURNS - 1);
    expect(last.results.filter((result) => result.content.startsWith('[evicted: ')).length).toBe(
      LONG_RUN_TURNS - 2,
    );
  });

  it.each<WireFormat>(['openai', 'anthropic'])(
    'turns old results into a one-line marker, keeps every call paired, and a re-read brings the text back (%s)',
    async (format) => {
      for (const name of ['a', 'b', 'c'])
        writeFileSync(join(root, `${name}.txt`), sampleText(name.charCodeAt(0), 40 * 1024));
      const run = await runScriptedAgent({
        format,
        root,
        maxTurns: 10,
        steps: [
          use('read_file', { path: 'a.txt' }),
          use('read_file', { path: 'b.txt' }),
          use('read_file', { path: 'c.txt' }),
          use('read_file', { path: 'a.txt' }),
          { text: 'Read them all.' },
        ],
      });
      expect(run.outcome.stoppedBy).toBe('answer');
      for (const request of run.requests) {
        const view = wireView(request);
        expect(view.results.map((result) => result.id)).toEqual(view.calls);
      }
      const [a, b, c, again] = wireView(run.requests.at(-1)!).results.map(
        (result) => result.content,
      );
      expect(a).toMatch(/^\[evicted: read_file a\.txt \(4\d\.\d KB\) — call again to re-read\]$/);
      expect(b).toMatch(/^\[evicted: read_file b\.txt \(4\d\.\d KB\) — call again to re-read\]$/);
      expect(c).toMatch(/^\[evicted: read_file c\.txt/);
      // Nothing was written since, so the re-read is answered from the first read's full text.
      expect(again).toMatch(/^\[Same as your identical read_file call earlier/);
      expect(again).toContain('part 97 line 10: value=');
      // The request that first carried c's result still had it in full.
      expect(wireView(run.requests[3]!).results[2]!.content).toContain('part 99 line 10:');
      expect(wireView(run.requests[0]!).notes).toEqual([]);
    },
  );
});

describe('repeat cache', () => {
  it('answers identical read-only calls from the last result until something writes', async () => {
    writeFileSync(join(root, 'a.txt'), sampleText(1, 4 * 1024));
    const run = await runScriptedAgent({
      root,
      maxTurns: 20,
      steps: [
        use('read_file', { path: 'a.txt' }),
        use('read_file', { path: 'a.txt' }),
        use('grep', { pattern: 'line 7:', path: 'a.txt' }),
        use('grep', { path: 'a.txt', pattern: 'line 7:' }),
        use('write_file', { path: 'a.txt', content: 'rewritten\n' }),
        use('read_file', { path: 'a.txt' }),
        use('run_bash', { command: 'echo appended >> a.txt' }),
        use('read_file', { path: 'a.txt' }),
        { text: 'Done.' },
      ],
    });
    const results = wireView(run.requests.at(-1)!).results.map((result) => result.content);
    expect(results[0]).toContain('part 1 line 0:');
    // Still shown above in full: a pointer to it instead of a second copy.
    expect(results[1]).toMatch(
      /^Same as your identical read_file call earlier .* still shown above/,
    );
    expect(results[3]).toBe(
      `[Same as your identical grep call earlier (nothing was written since):]\n${results[2]}`,
    );
    expect(results[5]).toContain('rewritten');
    expect(results[5]).not.toContain('Same as');
    expect(results[7]).toContain('appended');
    expect(results[7]).not.toContain('Same as');
    expect(run.activities.filter((activity) => activity.endsWith('(repeat)'))).toEqual([
      'read_file a.txt (repeat)',
      'grep a.txt (repeat)',
    ]);
  });
});

describe('turn countdown', () => {
  it('tells the worker to wrap up at 5, 3 and 1 turns left', async () => {
    const run = await runScriptedAgent({
      root,
      maxTurns: 8,
      steps: Array.from({ length: 8 }, () => use('list_files', { pattern: '*' })),
    });
    expect(run.outcome).toMatchObject({ stoppedBy: 'max_turns', turns: 8 });
    const notes = run.requests.map((_request, index) => newNotes(run.requests, index));
    expect(notes[3]).toMatch(
      /^\[Turn budget: 5 turns left, this one included\. Wrap up: .*save your state/,
    );
    expect(notes[5]).toMatch(/^\[Turn budget: 3 turns left/);
    expect(notes[7]).toMatch(
      /^\[Turn budget: this is your last turn\. Reply now with your final answer/,
    );
    for (const index of [0, 1, 2, 4, 6]) expect(notes[index]).toBe('');
  });

  it('says nothing in a run that ends well within its budget', async () => {
    const run = await runScriptedAgent({
      root,
      maxTurns: 40,
      steps: [
        use('list_files', { pattern: '*' }),
        use('list_files', { pattern: '**' }),
        { text: 'Nothing here.' },
      ],
    });
    expect(run.outcome).toMatchObject({ stoppedBy: 'answer', turns: 3 });
    expect(run.requests.map((request) => wireView(request).notes)).toEqual([[], [], []]);
  });
});

describe('nudge', () => {
  it('nudges once when a turn ends with an announcement instead of an answer; the run goes on', async () => {
    const run = await runScriptedAgent({
      root,
      maxTurns: 10,
      steps: [
        use('list_files', { pattern: '*' }),
        { text: 'The files are listed. Let me run the tests now.' },
        use('run_bash', { command: 'echo ok' }),
        { text: 'Ran the check: it prints ok. Nothing else to change.' },
      ],
    });
    expect(run.outcome).toEqual({
      summary: 'Ran the check: it prints ok. Nothing else to change.',
      turns: 4,
      stoppedBy: 'answer',
    });
    expect(newNotes(run.requests, 2)).toBe(NUDGE);
    expect(
      run.requests.filter((request) =>
        JSON.stringify(request.body).includes('does not read as a final answer'),
      ),
    ).toHaveLength(2);
    expect(run.activities).toContain('nudged: no tool call and no clear final answer');
  });

  it('does not nudge a clear final answer', async () => {
    const run = await runScriptedAgent({
      root,
      maxTurns: 10,
      steps: [{ text: 'Fixed add() to return a + b; node test.js passes.' }],
    });
    expect(run.outcome).toMatchObject({ stoppedBy: 'answer', turns: 1 });
    expect(run.requests).toHaveLength(1);
  });

  it('ends the run at the second unclear ending', async () => {
    const run = await runScriptedAgent({
      root,
      maxTurns: 10,
      steps: [
        { text: '' },
        use('list_files', { pattern: '*' }),
        { text: 'I will now check the configuration:' },
        { text: 'never asked for' },
      ],
    });
    expect(run.requests).toHaveLength(3);
    expect(run.outcome.stoppedBy).toBe('unclear');
    expect(run.outcome.summary).toBe(
      'I will now check the configuration:\n\n(The worker stopped without a clear final answer, even after a reminder.)',
    );
    expect(newNotes(run.requests, 1)).toBe(NUDGE);
  });
});

describe('going on after an answer', () => {
  it('continueAfterAnswer sends a message back and raises the turn budget', async () => {
    const rounds = [{ message: 'The tests fail: fix them.', extraTurns: 2 }];
    const run = await runScriptedAgent({
      root,
      maxTurns: 2,
      steps: [
        use('list_files', { pattern: '*' }),
        { text: 'Done.' },
        use('list_files', { pattern: '**' }),
        { text: 'Fixed the tests.' },
      ],
      continueAfterAnswer: () => Promise.resolve(rounds.shift()),
    });
    expect(run.outcome).toEqual({ summary: 'Fixed the tests.', turns: 4, stoppedBy: 'answer' });
    expect(newNotes(run.requests, 2)).toBe('The tests fail: fix them.');
  });
});
