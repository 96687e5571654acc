import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  startFakeProvider,
  type FakeProvider,
  type RecordedRequest,
} from '../helpers/fake-provider.ts';
import { BROKEN_ADD_PROJECT, initRepository } from '../helpers/git-project.ts';
import { startServer, type ServerHandle } from '../helpers/mcp-server.ts';
import { settleWorkers } from '../helpers/processes.ts';
import { pollTaskStatus, taskIdOf } from '../helpers/wait.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';

let world: TempEnv;
let fake: FakeProvider | undefined;
let server: ServerHandle | undefined;
beforeEach(() => {
  world = createTempEnv();
  initRepository(world.project, BROKEN_ADD_PROJECT);
});
afterEach(async () => {
  if (server) {
    for (const id of (await server.callText('task_status', {})).text.match(/t_[a-z0-9]{6}/g) ??
      []) {
      await server.callText('task_cancel', { task_id: id });
    }
    await server.close();
  }
  await settleWorkers(world.dataHome);
  await fake?.close();
  server = undefined;
  fake = undefined;
  world.cleanup();
});

const assistantTurns = (request: RecordedRequest) =>
  (request.body.messages as Array<{ role: string }>).filter(
    (message) => message.role === 'assistant',
  ).length;

async function start(
  respond: (request: RecordedRequest) => Parameters<typeof Object>[0],
  env: Record<string, string> = {},
) {
  fake = await startFakeProvider({ respond: respond as never });
  world.writeConfig({
    profiles: { w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm', local: true } },
  });
  server = await startServer({ ...world.env, ...env });
  return server;
}

describe('task control', () => {
  it('a task past its hard timeout is stopped as timeout; cleanup refuses it while it runs', async () => {
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

  it('with no answer in time, the worker proceeds on its own judgement and the task runs on', async () => {
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
    expect(JSON.stringify(fake!.requests[1]!.body.messages)).toContain(
      'No answer came in time. Proceed on your best conservative judgement',
    );
  });

  it('task_answer on a running task steers it at its next step', async () => {
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
    const later = fake!.requests.slice(1).map((request) => JSON.stringify(request.body.messages));
    expect(
      later.some((body) =>
        body.includes('Message from the supervisor (takes priority): Also update the README.'),
      ),
    ).toBe(true);
  });
});
