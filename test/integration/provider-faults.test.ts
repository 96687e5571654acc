import { describe, expect } from 'vitest';
import { callModel } from '../../server/src/calls/call-model.ts';
import { readLedger } from '../../server/src/calls/ledger.ts';
import type { GenerateRequest } from '../../server/src/wire/spec.ts';
import { FAST_CALLS, appContext } from '../helpers/app-context.ts';
import type { FakeReply } from '../helpers/fake-provider.ts';
import { taskTest as it } from '../helpers/task-world.ts';

it.override('repository', null);

const TOOL = {
  name: 'read_file',
  description: 'Reads a file',
  inputSchema: { type: 'object', properties: { path: { type: 'string' } } },
};
const REQUEST: GenerateRequest = {
  system: 'You are a worker.',
  messages: [{ role: 'user', content: [{ type: 'text', text: 'Read notes.txt' }] }],
  tools: [TOOL],
  maxOutputTokens: 256,
};
const OK: FakeReply = { text: 'All good.' };
const TOOL_CALL: FakeReply = {
  toolUses: [
    { id: 'call_1', name: 'read_file', input: { path: 'notes/a-rather-long-file-name.txt' } },
  ],
  chunkSize: 4,
};

interface FaultCase {
  name: string;
  replies: FakeReply[];
  outcome: 'ok' | 'error';
  attempts: number;
  /** The call must have waited at least this long (Retry-After honoured). */
  minMs?: number;
  error?: RegExp;
  toolInput?: unknown;
}

const FAULTS: FaultCase[] = [
  {
    name: '429 with Retry-After in seconds',
    replies: [{ kind: 'error', status: 429, headers: { 'retry-after': '1' } }, OK],
    outcome: 'ok',
    attempts: 2,
    minMs: 1_000,
  },
  {
    name: '429 with retry-after-ms',
    replies: [{ kind: 'error', status: 429, headers: { 'retry-after-ms': '300' } }, OK],
    outcome: 'ok',
    attempts: 2,
    minMs: 300,
  },
  {
    name: '500 then success',
    replies: [{ kind: 'error', status: 500 }, OK],
    outcome: 'ok',
    attempts: 2,
  },
  {
    name: '503 then success',
    replies: [{ kind: 'error', status: 503 }, OK],
    outcome: 'ok',
    attempts: 2,
  },
  {
    name: '529 overloaded then success',
    replies: [{ kind: 'error', status: 529 }, OK],
    outcome: 'ok',
    attempts: 2,
  },
  {
    name: '500 every time: bounded attempts',
    replies: Array.from({ length: 4 }, () => ({ kind: 'error', status: 500 })),
    outcome: 'error',
    attempts: 4,
    error: /answered HTTP 500.*\(after 4 attempts\)/,
  },
  {
    name: 'connection reset before headers',
    replies: [{ kind: 'reset' }, OK],
    outcome: 'ok',
    attempts: 2,
  },
  {
    name: 'stream cut in the middle of a tool call’s JSON',
    replies: [{ ...TOOL_CALL, cutAfterEvents: 4 }, TOOL_CALL],
    outcome: 'ok',
    attempts: 2,
    toolInput: { path: 'notes/a-rather-long-file-name.txt' },
  },
  {
    name: 'stall longer than the idle timeout: not retried, the limit and its knob named',
    replies: [{ kind: 'hang' }, OK],
    outcome: 'error',
    attempts: 1,
    error: /sent nothing for \d+ ms \(the profile's idle limit, "idleTimeoutS"\)/,
  },
  {
    name: 'malformed JSON in the stream',
    replies: [
      {
        kind: 'raw',
        body: 'data: {"choices": [ {oops\n\nevent: message_start\ndata: {not json\n\n',
      },
      OK,
    ],
    outcome: 'ok',
    attempts: 2,
  },
  {
    name: '400 with an error body: no retry, the endpoint’s words',
    replies: [
      {
        kind: 'error',
        status: 400,
        body: { error: { message: 'max_tokens is too large for this model' }, type: 'error' },
      },
    ],
    outcome: 'error',
    attempts: 1,
    error: /answered HTTP 400: max_tokens is too large for this model/,
  },
  {
    name: '401: no retry',
    replies: [{ kind: 'error', status: 401, body: { error: { message: 'invalid x-api-key' } } }],
    outcome: 'error',
    attempts: 1,
    error: /answered HTTP 401: invalid x-api-key — the key was refused/,
  },
];

for (const format of ['openai', 'anthropic'] as const) {
  describe(`fault matrix (${format})`, () => {
    for (const fault of FAULTS) {
      it(fault.name, async ({ world, provider }) => {
        const fake = await provider.start({ respond: fault.replies });
        const baseUrl = format === 'openai' ? fake.openaiBaseUrl : fake.url;
        world.writeConfig({ profiles: { w: { format, baseUrl, model: 'm', local: true } } });
        const started = Date.now();
        const outcome = await callModel(
          { request: REQUEST, bytesSent: 10, callOptions: FAST_CALLS },
          appContext(world),
        ).then(
          (value) => ({ value }),
          (error: unknown) => ({ error: error as Error }),
        );
        expect(fake.requests).toHaveLength(fault.attempts);
        expect(fake.unscripted).toEqual([]);
        if (fault.minMs) expect(Date.now() - started).toBeGreaterThanOrEqual(fault.minMs - 20);
        if (fault.outcome === 'ok') {
          expect('value' in outcome, 'error' in outcome ? outcome.error.message : '').toBe(true);
          const result = 'value' in outcome ? outcome.value.result : undefined;
          expect(result?.attempts).toBe(fault.attempts);
          if (fault.toolInput) {
            expect(result?.stopReason).toBe('tool_use');
            expect(result?.content).toContainEqual(
              expect.objectContaining({
                type: 'tool_use',
                name: 'read_file',
                input: fault.toolInput,
              }),
            );
          }
        } else {
          expect('error' in outcome ? outcome.error.message : 'no error').toMatch(fault.error!);
        }
        // One ledger record per call, with the attempts and outcome the fake saw, after one per
        // failed attempt that reported usage (Anthropic's message_start carries it before a cut).
        const ledger = readLedger(world.dataHome);
        const first = fault.replies[0] ?? {};
        const reportedBeforeCut = format === 'anthropic' && 'cutAfterEvents' in first;
        expect(ledger).toHaveLength(reportedBeforeCut ? 2 : 1);
        if (reportedBeforeCut) {
          expect(ledger[0]).toMatchObject({ outcome: 'error', attempts: 1 });
          expect(ledger[0]!.inputTokens).toBeGreaterThan(0);
        }
        expect(new Set(ledger.map((record) => record.callId)).size).toBe(1);
        expect(ledger.at(-1)).toMatchObject({
          outcome: fault.outcome,
          attempts: fault.attempts,
          profile: 'w',
          costUsd: 0,
        });
      });
    }
  });
}
