import { describe, expect } from 'vitest';
import type { RecordedRequest } from '../helpers/fake-provider.ts';
import { taskTest } from '../helpers/task-world.ts';
import { pollTaskStatus, taskIdOf } from '../helpers/wait.ts';

const assistantTurns = (request: RecordedRequest) =>
  (request.body.messages as Array<{ role: string }>).filter(
    (message) => message.role === 'assistant',
  ).length;

const it = taskTest.extend(
  'start',
  ({ world, provider, server }) =>
    async (
      respond: (request: RecordedRequest) => Parameters<typeof Object>[0],
      env: Record<string, string> = {},
    ) => {
      const fake = await provider.start({ respond: respond as never });
      world.writeConfig({
        profiles: { w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm', local: true } },
      });
      return server.start({ ...world.env, ...env });
    },
);

describe('task control', () => {
  it('a task past its hard timeout is stopped as timeout; cleanup refuses it while it runs', async ({
    start,
  }) => {
    const handle = await start(() => ({ kind: 'hang' }));
    const id = taskIdOf((await handle.callText('task_start', { task: 'slow', timeout_s: 1 })).text);
    const refused = await handle.callText('task_cleanup', { task_id: id });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain('cancel it with task_cancel before cleaning it up');
    expect(await pollTaskStatus(handle, id, /timeout/)).toMatch(
      new RegExp(`^${id} timeout: hard timeout: ran longer than 1 s`),
    );
    const cleaned = (await handle.callText('task_cleanup', { task_id: id })).text;
    expect(cleaned, cleaned).toMatch(
      // It changed nothing, so its worktree and branch went when it ended.
      new RegExp(`^${id}: cleaned up; branch delegate/${id} already removed`),
    );
  });

  it('with no answer in time, the worker proceeds on its own judgement and the task runs on', async ({
    start,
    provider,
  }) => {
    const handle = await start(
      (request) =>
        assistantTurns(request) === 0
          ? { toolUses: [{ name: 'ask_supervisor', input: { question: 'Which database?' } }] }
          : { text: 'Went with SQLite, the conservative choice.' },
      { DELEGATE_QUESTION_TIMEOUT_S: '1' },
    );
    const id = taskIdOf((await handle.callText('task_start', { task: 'pick a db' })).text);
    await pollTaskStatus(handle, id, /needs_input: "Which database\?"/);
    await pollTaskStatus(handle, id, / done /);
    expect(JSON.stringify(provider.started!.requests[1]!.body.messages)).toContain(
      'No answer came in time. Proceed on your best conservative judgement',
    );
  });

  it('task_answer on a running task steers it at its next step', async ({ start, provider }) => {
    const handle = await start((request) =>
      assistantTurns(request) < 2
        ? { toolUses: [{ name: 'report_progress', input: { note: 'working' } }], delayMs: 600 }
        : { text: 'done' },
    );
    const id = taskIdOf((await handle.callText('task_start', { task: 'work' })).text);
    await pollTaskStatus(handle, id, /running/);
    const steered = await handle.callText('task_answer', {
      task_id: id,
      answer: 'Also update the README.',
    });
    expect(steered.text).toContain('reads it at its next step');
    await pollTaskStatus(handle, id, / done /);
    const later = provider
      .started!.requests.slice(1)
      .map((request) => JSON.stringify(request.body.messages));
    expect(
      later.some((body) =>
        body.includes('Message from the supervisor (takes priority): Also update the README.'),
      ),
    ).toBe(true);
  });
});
