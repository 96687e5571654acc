/**
 * `explore`: a read-only agentic question to a worker (issue 30). The fake provider plays the
 * worker: it searches and reads through the read-only tools, and answers with references, one
 * of them to a line that does not exist; or it tries to write, which changes nothing.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { readLedger } from '../../server/src/calls/ledger.ts';
import { byAssistantTurn, type FakeReply, type RecordedRequest } from '../helpers/fake-provider.ts';
import { taskTest } from '../helpers/task-world.ts';

const REFUNDS = [
  'export function refundOrder(order) {',
  '  if (order.paid) return issueRefund(order.id);',
  '  return null;',
  '}',
  '',
].join('\n');

const PROJECT = {
  'README.md': '# shop\n',
  'src/billing/refunds.ts': REFUNDS,
  'src/cart.ts': 'export const cart = [];\n',
};

const use = (name: string, input: Record<string, unknown>): FakeReply => ({
  toolUses: [{ name, input }],
});

const it = taskTest
  .override('repository', PROJECT)
  .extend(
    'startWith',
    ({ world, provider, server }) =>
      async (replies: FakeReply[], config: Record<string, unknown> = {}) => {
        const fake = await provider.start({ respond: byAssistantTurn(replies) });
        world.writeConfig({
          profiles: {
            w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm', local: true },
          },
          ...config,
        });
        return server.start(world.env);
      },
  );

const toolNames = (request: RecordedRequest | undefined) =>
  ((request?.body?.tools ?? []) as Array<{ function: { name: string } }>).map(
    (tool) => tool.function.name,
  );

/** Every file of the project with its content, outside .git: what must not change. */
function projectFiles(dir: string): string {
  return execFileSync('git', ['status', '--porcelain', '--ignored', '--untracked-files=all'], {
    cwd: dir,
    encoding: 'utf8',
  });
}

describe('explore', () => {
  it('finds what the question does not name, with read-only tools; a reference to no line is flagged', async ({
    startWith,
    provider,
    world,
  }) => {
    const handle = await startWith([
      use('grep', { pattern: 'refund' }),
      use('read_file', { path: 'src/billing/refunds.ts' }),
      {
        text:
          'Refunds are handled by `refundOrder` in src/billing/refunds.ts:1-4: a paid order gets ' +
          'issueRefund (src/billing/refunds.ts:2). The retry logic is at src/billing/refunds.ts:40, ' +
          'and see src/billing/ledger.ts:7.',
      },
    ]);
    const { text, isError } = await handle.callText('explore', {
      question: 'Where are refunds handled?',
    });
    expect(isError, text).toBe(false);
    // The worker found the file itself: the grep result it got back named it.
    const requests = provider.started!.requests;
    expect(JSON.stringify(requests[1]!.body.messages)).toContain('src/billing/refunds.ts:1');
    // Read-only tools only: nothing that writes or runs was offered.
    expect(toolNames(requests[0])).toEqual(
      expect.arrayContaining(['read_file', 'list_files', 'grep']),
    );
    for (const name of ['write_file', 'edit_file', 'run_bash']) {
      expect(toolNames(requests[0])).not.toContain(name);
    }
    // References that hold pass as they are; the others are marked where they stand.
    expect(text).toContain('src/billing/refunds.ts:1-4: a paid order');
    expect(text).toContain('(src/billing/refunds.ts:2)');
    expect(text).toContain('src/billing/refunds.ts:40 [unverified: the file has 4 lines]');
    expect(text).toContain('src/billing/ledger.ts:7 [unverified: no such file]');
    expect(text).toContain(
      'references: 4 checked against the files, 2 point at nothing: src/billing/refunds.ts:40 (the file has 4 lines), src/billing/ledger.ts:7 (no such file)',
    );
    expect(text).toMatch(
      /\[explore: profile w · model m · 3 turns · read 1 file, [\d.]+ K?B of tool results \(≈ \d+ tokens you did not read\)/,
    );
    // The ledger counts it as an exploration, and `usage` shows it apart.
    const records = readLedger(world.dataHome);
    expect(records).toHaveLength(3);
    expect(new Set(records.map((record) => record.kind))).toEqual(new Set(['explore']));
    expect(new Set(records.map((record) => record.runId)).size).toBe(1);
    expect(records.reduce((sum, record) => sum + record.bytesSent, 0)).toBeGreaterThan(
      REFUNDS.length,
    );
    const usage = await handle.callText('usage', {});
    expect(usage.text).toMatch(/- of which 1 exploration: 3 calls/);
  });

  it('a write attempt is refused as a tool error the worker sees, and changes nothing', async ({
    startWith,
    provider,
    world,
  }) => {
    const before = projectFiles(world.project);
    const names = readdirSync(join(world.project, 'src')).sort();
    const handle = await startWith([
      {
        toolUses: [
          { name: 'write_file', input: { path: 'src/cart.ts', content: 'pwned\n' } },
          { name: 'edit_file', input: { path: 'README.md', old_text: 'shop', new_text: 'x' } },
          { name: 'run_bash', input: { command: 'touch made-by-worker.txt' } },
        ],
      },
      { text: 'I could not change anything; cart is at src/cart.ts:1.' },
    ]);
    const { text, isError } = await handle.callText('explore', { question: 'Empty the cart.' });
    expect(isError, text).toBe(false);
    const told = JSON.stringify(provider.started!.requests[1]!.body.messages);
    for (const name of ['write_file', 'edit_file', 'run_bash']) {
      expect(told).toContain(`Unknown tool ${name}.`);
    }
    expect(told).toContain('This exploration is read-only: nothing can be written, edited or run.');
    expect(projectFiles(world.project)).toBe(before);
    expect(readdirSync(join(world.project, 'src')).sort()).toEqual(names);
    expect(text).toContain('references: 1 checked against the files, all found');
  });

  it('stops at its turn limit and says so, with what it had', async ({ startWith }) => {
    const handle = await startWith([
      {
        text: 'Looking at the cart first.',
        toolUses: [{ name: 'list_files', input: { pattern: '**/*' } }],
      },
      use('grep', { pattern: 'cart' }),
      use('grep', { pattern: 'never reached' }),
    ]);
    const { text, isError } = await handle.callText('explore', {
      question: 'Where is the cart?',
      max_turns: 2,
    });
    expect(isError, text).toBe(false);
    expect(text).toContain(
      '(The exploration stopped at its 2-turn limit; the answer may be incomplete.)',
    );
    expect(text).toContain('Looking at the cart first.');
  });
});
