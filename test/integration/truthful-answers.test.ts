import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import type { FakeReply } from '../helpers/fake-provider.ts';
import type { ServerHandle } from '../helpers/mcp-server.ts';
import { taskTest } from '../helpers/task-world.ts';

/** The built server with one profile of `format` on a fake provider that answers `reply`. */
const it = taskTest.extend(
  'serve',
  ({ world, provider, server }) =>
    async (
      format: 'openai' | 'anthropic',
      respond: FakeReply | ((body: any) => FakeReply),
      model = 'worker-model',
    ): Promise<ServerHandle> => {
      const fake = await provider.start({
        respond: (request) => (typeof respond === 'function' ? respond(request.body) : respond),
      });
      world.writeConfig({
        profiles: {
          w: {
            format,
            baseUrl: format === 'openai' ? fake.openaiBaseUrl : fake.url,
            model,
            local: true,
          },
        },
      });
      return server.start(world.env);
    },
);
it.override('repository', null);

describe('a cut-off answer says so, first and in the usage line', () => {
  it.for([
    ['openai', 'length'],
    ['anthropic', 'max_tokens'],
  ] as const)('%s finish %s', async ([format, stopReason], { serve }) => {
    const handle = await serve(format, {
      text: 'The first three errors are',
      stopReason,
      usage: { output: 64 },
    });
    const { text, isError } = await handle.callText('delegate', {
      task: 'List the errors',
      max_output_tokens: 64,
    });
    expect(isError).toBe(false);
    const [first, , answer] = text.split('\n');
    expect(first).toBe(
      '[cut off at 64 output tokens — raise max_output_tokens or narrow the task]',
    );
    expect(answer).toBe('The first three errors are');
    expect(text).toMatch(/\[delegate: profile w · .* out tokens · cut off at 64 output tokens · /);
  });

  it('Anthropic model_context_window_exceeded: cut off because the context is full', async ({
    serve,
  }) => {
    const handle = await serve('anthropic', {
      text: 'Partial',
      stopReason: 'model_context_window_exceeded',
      usage: { output: 10 },
    });
    const { text } = await handle.callText('delegate', { task: 'x' });
    expect(text.split('\n')[0]).toBe(
      "[cut off at 10 output tokens: the model's context window is full — send fewer files or narrow the task]",
    );
  });

  it('write_to: the file holds the answer, the result carries the notice', async ({
    serve,
    world,
  }) => {
    const handle = await serve('openai', {
      text: 'def half(',
      stopReason: 'length',
      usage: { output: 5 },
    });
    const { text } = await handle.callText('delegate', {
      task: 'Draft it',
      write_to: 'out/draft.py',
    });
    expect(text.split('\n')[0]).toBe(
      '[cut off at 5 output tokens — raise max_output_tokens or narrow the task]',
    );
    expect(text).toContain('Wrote the answer to ');
    expect(readFileSync(join(world.project, 'out/draft.py'), 'utf8')).toBe('def half(');
  });

  it('delegate_batch: the cut-off job says so, the complete one does not', async ({ serve }) => {
    const handle = await serve('openai', (body) =>
      JSON.stringify(body.messages).includes('job one')
        ? { text: 'Complete answer.' }
        : { text: 'Cut answ', stopReason: 'length', usage: { output: 3 } },
    );
    const { text } = await handle.callText('delegate_batch', {
      jobs: [
        { id: 'one', task: 'job one' },
        { id: 'two', task: 'job two' },
      ],
    });
    const [, one, two] = text.split(/^## /m);
    expect(one).not.toContain('cut off');
    expect(two).toMatch(
      /^job 2 \(two\): ok\n\[cut off at 3 output tokens — raise max_output_tokens or narrow the task\]\n\nCut answ\n/,
    );
  });
});

describe('filtered and refused answers are reported as such', () => {
  it('OpenAI content_filter: what came through, after the notice', async ({ serve }) => {
    const handle = await serve('openai', {
      text: 'The log shows',
      stopReason: 'content_filter',
    });
    const { text, isError } = await handle.callText('delegate', { task: 'x' });
    expect(isError).toBe(false);
    expect(text.split('\n')[0]).toBe(
      "[content filtered: the provider's filter withheld part of the answer (content_filter) — what came through is below]",
    );
    expect(text).toContain('The log shows');
    expect(text).toMatch(/ · content filtered · /);
  });

  it('OpenAI delta.refusal: the model’s own sentence, not "try again"', async ({ serve }) => {
    const handle = await serve('openai', {
      refusal: "I'm sorry, but I can't help with writing malware.",
      chunkSize: 7,
    });
    const { text, isError } = await handle.callText('delegate', { task: 'x' });
    expect(isError).toBe(true);
    expect(text).toBe(
      'Worker profile "w" (model worker-model) returned no answer text: ' +
        `[refused by the model: "I'm sorry, but I can't help with writing malware."]`,
    );
  });

  it('Anthropic stop_reason refusal: its stop_details explanation and category', async ({
    serve,
  }) => {
    const handle = await serve('anthropic', {
      text: '',
      stopReason: 'refusal',
      stopDetails: { type: 'refusal', category: 'bio', explanation: 'This could enable harm.' },
    });
    const { text, isError } = await handle.callText('delegate', { task: 'x' });
    expect(isError).toBe(true);
    expect(text).toContain('[refused by the model: "This could enable harm. (category bio)"]');
    expect(text).not.toMatch(/try again/);
  });

  it('Anthropic refusal after some text: the text, with the refusal first', async ({ serve }) => {
    const handle = await serve('anthropic', {
      text: 'Step one is',
      stopReason: 'refusal',
    });
    const { text, isError } = await handle.callText('delegate', { task: 'x' });
    expect(isError).toBe(false);
    expect(text.split('\n')[0]).toBe(
      '[refused: the provider stopped the answer (stop reason refusal) — rephrase the task or use another profile]',
    );
    expect(text).toContain('Step one is');
    expect(text).toMatch(/ · refused · /);
  });
});

describe('reasoning models take max_completion_tokens', () => {
  const UNSUPPORTED = {
    kind: 'error',
    status: 400,
    body: {
      error: {
        message:
          "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
        type: 'invalid_request_error',
        param: 'max_tokens',
        code: 'unsupported_parameter',
      },
    },
  } as const;

  it('retries once on the max_tokens 400, and sends max_completion_tokens from then on', async ({
    serve,
    provider,
  }) => {
    const handle = await serve('openai', (body) =>
      body.max_tokens !== undefined ? UNSUPPORTED : { text: 'Reasoned answer.' },
    );
    for (const task of ['first', 'second']) {
      const { text, isError } = await handle.callText('delegate', { task, max_output_tokens: 500 });
      expect(isError, text).toBe(false);
      expect(text).toContain('Reasoned answer.');
    }
    const limits = provider.started!.requests.map((request) => ({
      max_tokens: request.body.max_tokens,
      max_completion_tokens: request.body.max_completion_tokens,
    }));
    expect(limits).toEqual([
      { max_tokens: 500, max_completion_tokens: undefined },
      { max_tokens: undefined, max_completion_tokens: 500 },
      { max_tokens: undefined, max_completion_tokens: 500 },
    ]);
    expect(provider.started!.requests[1]!.body.messages).toEqual(
      provider.started!.requests[0]!.body.messages,
    );
  });

  it('sends max_completion_tokens to a known reasoning model at once', async ({
    serve,
    provider,
  }) => {
    const handle = await serve('openai', { text: 'ok' }, 'o4-mini');
    await handle.callText('delegate', { task: 'x', max_output_tokens: 300 });
    expect(provider.started!.requests).toHaveLength(1);
    expect(provider.started!.requests[0]!.body).toMatchObject({ max_completion_tokens: 300 });
    expect(provider.started!.requests[0]!.body.max_tokens).toBeUndefined();
  });

  it('does not retry another 400', async ({ serve, provider }) => {
    const handle = await serve('openai', {
      kind: 'error',
      status: 400,
      body: { error: { message: "Invalid value for 'temperature'." } },
    });
    const { isError } = await handle.callText('delegate', { task: 'x' });
    expect(isError).toBe(true);
    expect(provider.started!.requests).toHaveLength(1);
  });
});
