import { describe, expect, it } from 'vitest';
import {
  canonicalJson,
  createContextPolicy,
  type ToolCallFacts,
} from '../../server/src/agent/context-policy.ts';
import { TURN_BUDGET, turnBudget } from '../../server/src/agent/turn-budget.ts';
import { countdownNote, isUnclearEnding } from '../../server/src/agent/turn-notices.ts';
import type { Block } from '../../server/src/wire/spec.ts';

type ToolResult = Extract<Block, { type: 'tool_result' }>;

const result = (content: string): ToolResult => ({ type: 'tool_result', toolUseId: 'x', content });
const read = (path: string, turn: number): ToolCallFacts => ({
  name: 'read_file',
  input: { path },
  label: `read_file ${path}`,
  isReadOnly: true,
  turn,
});

describe('eviction', () => {
  it('evicts the oldest results in a batch once past the budget, never the latest turn', () => {
    const policy = createContextPolicy({
      evictAboveBytes: 10_000,
      evictDownToBytes: 5_000,
      smallResultBytes: 100,
      isRepeatCacheOn: true,
    });
    const blocks = [1, 2, 3, 4].map((turn) => {
      const block = result('x'.repeat(3_000));
      policy.track(block, read(`f${turn}.ts`, turn));
      policy.evict(turn);
      return block;
    });
    const tiny = result('ok');
    policy.track(tiny, read('tiny', 5));
    policy.evict(5);
    // 12 KB after turn 4: the oldest go until ≤ 5 KB remain, so f1–f3 in one batch.
    expect(blocks.map((block) => block.content.startsWith('[evicted: '))).toEqual([
      true,
      true,
      true,
      false,
    ]);
    expect(blocks[0]!.content).toBe('[evicted: read_file f1.ts (2.9 KB) — call again to re-read]');
    expect(tiny.content).toBe('ok');
    const big = result('y'.repeat(20_000));
    policy.track(big, { ...read('big', 6), isReadOnly: false, label: 'run_bash make' });
    policy.evict(6);
    expect(big.content).toHaveLength(20_000);
    expect(blocks[3]!.content).toMatch(/^\[evicted: read_file f4\.ts/);
  });
});

describe('repeat cache', () => {
  it('answers an identical read-only call whatever the key order, and forgets after a write', () => {
    const policy = createContextPolicy();
    policy.track(result('small text'), {
      ...read('a.ts', 1),
      input: { path: 'a.ts', offset: 1 },
    });
    expect(policy.repeatOf('read_file', { offset: 1, path: 'a.ts' })).toBe(
      '[Same as your identical read_file call earlier (nothing was written since):]\nsmall text',
    );
    expect(policy.repeatOf('read_file', { path: 'a.ts' })).toBeUndefined();
    expect(policy.repeatOf('grep', { offset: 1, path: 'a.ts' })).toBeUndefined();
    policy.forgetReads();
    expect(policy.repeatOf('read_file', { offset: 1, path: 'a.ts' })).toBeUndefined();
  });

  it('does not cache errors, writes or its own answers', () => {
    const policy = createContextPolicy();
    policy.track({ ...result('no such file'), isError: true }, read('gone.ts', 1));
    policy.track(result('wrote'), { ...read('w.ts', 1), isReadOnly: false });
    policy.track(result('again'), { ...read('r.ts', 1), isRepeat: true });
    expect(policy.repeatOf('read_file', { path: 'gone.ts' })).toBeUndefined();
    expect(policy.repeatOf('read_file', { path: 'w.ts' })).toBeUndefined();
    expect(policy.repeatOf('read_file', { path: 'r.ts' })).toBeUndefined();
  });

  it('canonical JSON sorts keys at every level', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { f: 1, e: 0 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[2,{"e":0,"f":1}]},"b":1}',
    );
  });
});

describe('turn notices', () => {
  it('counts down at 5, 3 and 1 turns left only', () => {
    const fired = Array.from({ length: 10 }, (_, left) => left).filter((left) =>
      countdownNote(left),
    );
    expect(fired).toEqual([1, 3, 5]);
  });

  it.each([
    ['', 'end'],
    ['   ', 'end'],
    ['The fix is in place and the', 'max_tokens'],
    ['Here is what I found:', 'end'],
    ['Checking the rest...', 'end'],
    ['I read the code. Let me run the tests now.', 'end'],
    ["Done with step 1.\nNext, I'll update the docs.", 'end'],
    ['OK, I will now check the configuration', 'end'],
    ['Should I also change the README?', 'end'],
    ['<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>', 'end'],
    ['```json\n{"name": "grep", "arguments": {"pattern": "x"}}\n```', 'end'],
  ] as const)('an unclear ending: %j (%s)', (text, stop) => {
    expect(isUnclearEnding(text, stop)).toBe(true);
  });

  it.each([
    'Fixed add() to return a + b; node test.js passes.',
    'Summary:\n- changed src/add.js\n- tests pass',
    'All done. Let me know if you want the docs updated too.',
    'I will not touch the config: it is generated. The tests pass.',
  ])('a clear final answer: %j', (text) => {
    expect(isUnclearEnding(text, 'end')).toBe(false);
  });
});

describe('turn budget', () => {
  it('defaults by profile, keeps an explicit budget, and caps every budget', () => {
    expect(turnBudget(undefined, { local: true })).toBe(TURN_BUDGET.local);
    expect(turnBudget(undefined, {})).toBe(TURN_BUDGET.cloud);
    expect(turnBudget(undefined, { local: false })).toBe(40);
    expect(turnBudget(12, { local: true })).toBe(12);
    expect(turnBudget(400, {})).toBe(TURN_BUDGET.cap);
    expect(TURN_BUDGET).toEqual({ cloud: 40, local: 80, cap: 150 });
  });
});
