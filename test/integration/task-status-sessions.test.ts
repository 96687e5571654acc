import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startServer, type ServerHandle } from '../helpers/mcp-server.ts';
import { writeTask } from '../helpers/task-jobs.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';

const MINE = '3f1d9c2e-7b4a-4e21-9a0b-5c6d7e8f9a01';
const THEIRS = '8a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d';

let world: TempEnv;
let server: ServerHandle | undefined;
beforeEach(async () => {
  world = createTempEnv();
  const ended = { state: 'done' as const, verdict: 'passed' as const };
  await writeTask(world.dataHome, world.project, { id: 't_mine01', ...ended, session: MINE });
  await writeTask(world.dataHome, world.project, { id: 't_their1', ...ended, session: THEIRS });
  await writeTask(world.dataHome, world.project, { id: 't_term01', ...ended });
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  world.cleanup();
});

const lineOf = (text: string, id: string) =>
  text.split('\n').find((line) => line.startsWith(`${id} `));

describe('task_status, asked from a session', () => {
  it.each([
    ['its own task: no mark', 't_mine01', false],
    ["another session's task: marked", 't_their1', true],
    ['a task started from a terminal: marked', 't_term01', true],
  ])('%s', async (_case, id, isMarked) => {
    server = await startServer({ ...world.env, CLAUDE_CODE_SESSION_ID: MINE }, world.project);
    const listed = (await server.callText('task_status', {})).text;
    const byId = (await server.callText('task_status', { task_ids: [id] })).text;
    for (const line of [lineOf(listed, id), byId]) {
      expect(line).toMatch(new RegExp(`^${id} done passed`));
      expect(line!.endsWith(" · another session's")).toBe(isMarked);
      expect(line!.length).toBeLessThanOrEqual(160);
    }
  });

  it('under no session (an older Claude Code), marks nothing', async () => {
    server = await startServer(world.env, world.project);
    const listed = (await server.callText('task_status', {})).text;
    expect(listed.split('\n')).toHaveLength(3);
    expect(listed).not.toContain('another session');
  });
});
