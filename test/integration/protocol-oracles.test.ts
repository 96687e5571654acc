/**
 * Outside judges of both protocol eras: the official MCP Inspector CLI (its own client, which
 * validates every result against the era's core schema) lists and calls a tool in each era it
 * speaks, and the tasks extension's published schemas (`@modelcontextprotocol/ext-tasks`) accept
 * our 2026-07-28 results: tools/list, a task's creation, tasks/get, tasks/update, tasks/cancel.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import {
  CancelTaskResultV2Schema,
  CreateTaskResultV2Schema,
  GetTaskResultV2Schema,
  ToolV2Schema,
  UpdateTaskResultV2Schema,
} from '@modelcontextprotocol/ext-tasks/core/v2';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, SERVER_BUNDLE } from '../helpers/mcp-server.ts';
import { killQuietly } from '../helpers/processes.ts';
import { MODERN_META, startRawServer, type RawLines } from '../helpers/raw-lines.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';
import { scaledMs } from '../helpers/timing.ts';
import { TOOLS } from '../../server/src/tools/registry.ts';

const INSPECTOR = join(REPO_ROOT, 'node_modules', '.bin', 'mcp-inspector');
const SERVER_INFO = 'io.modelcontextprotocol/serverInfo';

let world: TempEnv;
let server: RawLines | undefined;
const inspectors: number[] = [];

beforeEach(() => {
  world = createTempEnv();
});
afterEach(async () => {
  for (const pid of inspectors.splice(0)) killQuietly(-pid);
  await server?.close();
  server = undefined;
  world.cleanup();
});

/**
 * One Inspector CLI run against the built server over stdio, in its own temp HOME (the server
 * gets the world's environment through `-e`): its parsed JSON output.
 */
async function inspect(era: string, ...method: string[]): Promise<Record<string, any>> {
  const serverEnv = Object.entries(world.env).flatMap(([key, value]) => ['-e', `${key}=${value}`]);
  const args = ['--cli', '--protocol-era', era, '--format', 'json', '-q', ...method];
  const child = spawn(
    process.execPath,
    [INSPECTOR, ...args, ...serverEnv, process.execPath, SERVER_BUNDLE],
    { env: world.env, cwd: world.project, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  inspectors.push(child.pid!);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  expect(code, `inspector ${args.join(' ')}: ${stderr}${stdout}`).toBe(0);
  return JSON.parse(stdout) as Record<string, any>;
}

describe('the MCP Inspector CLI 2.12.0 as a strict client', () => {
  it.each(['modern', 'auto', 'legacy'])(
    '--protocol-era %s: lists every tool and calls providers',
    async (era) => {
      const [list, call] = await Promise.all([
        inspect(era, '--method', 'tools/list'),
        inspect(era, '--method', 'tools/call', '--tool-name', 'providers'),
      ]);
      expect(list.error).toBeUndefined();
      const tools = list.result.tools as Array<Record<string, any>>;
      // Every tool, and hook_answer, which only Claude Code's hooks call.
      expect(tools.map((tool) => tool.name).sort()).toEqual(
        [...TOOLS.map((tool) => tool.name), 'hook_answer'].sort(),
      );
      // In either era it stays out of the model's list: MCP Apps visibility "app" only.
      const hook = tools.find((tool) => tool.name === 'hook_answer');
      expect(hook?._meta?.ui).toEqual({ visibility: ['app'] });
      expect(call.error).toBeUndefined();
      expect(call.result.content[0].text).toContain('No worker is configured');
      // What shows the era the Inspector settled on: a 2026 result names the server in `_meta`,
      // and 2026 tools have no `execution` (2025's taskSupport).
      const isModern = era !== 'legacy';
      expect(call.result._meta?.[SERVER_INFO]?.name === 'delegate-workers').toBe(isModern);
      for (const tool of tools)
        expect(tool.execution).toEqual(isModern ? undefined : { taskSupport: 'forbidden' });
    },
    scaledMs(30_000),
  );
});

describe('the tasks extension schemas (ext-tasks 0.2.2, core/v2) on our 2026-07-28 results', () => {
  const valid =
    (schema: { safeParse(value: unknown): { error?: { issues: unknown } } }) => (value: unknown) =>
      expect(schema.safeParse(value).error?.issues).toBeUndefined();

  async function poll(raw: RawLines, taskId: string, status: string) {
    const deadline = Date.now() + scaledMs(15_000);
    for (let id = 100; ; id += 1) {
      const { result } = await raw.request(id, 'tasks/get', { taskId, _meta: MODERN_META });
      if (result?.status === status) return result;
      if (Date.now() > deadline) throw new Error(`task never ${status}: ${JSON.stringify(result)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  it('accept tools/list (with its cache hint), a created task, tasks/get, tasks/update and tasks/cancel', async () => {
    world.writeConfig({
      profiles: { w: { format: 'openai', baseUrl: 'http://127.0.0.1:9/v1', model: 'm' } },
    });
    server = startRawServer({ ...world.env, DELEGATE_TASK_POLL_MS: '300' }, world.project);
    const list = (await server.request(1, 'tools/list', { _meta: MODERN_META })).result!;
    expect(list).toMatchObject({ resultType: 'complete', ttlMs: 0, cacheScope: 'private' });
    for (const tool of list.tools as unknown[]) valid(ToolV2Schema)(tool);

    // provider_key needs no model: it asks the user at once, so it is a task at once.
    const created = await server.request(2, 'tools/call', {
      name: 'provider_key',
      arguments: { profile: 'w' },
      _meta: MODERN_META,
    });
    valid(CreateTaskResultV2Schema)(created.result);
    const taskId = created.result!.taskId as string;
    valid(GetTaskResultV2Schema)(await poll(server, taskId, 'input_required'));
    const [key] = Object.keys((await poll(server, taskId, 'input_required')).inputRequests);
    const update = await server.request(3, 'tasks/update', {
      taskId,
      inputResponses: { [key!]: { action: 'decline' } },
      _meta: MODERN_META,
    });
    valid(UpdateTaskResultV2Schema)(update.result);
    valid(GetTaskResultV2Schema)(await poll(server, taskId, 'completed'));
    const cancel = await server.request(4, 'tasks/cancel', { taskId, _meta: MODERN_META });
    valid(CancelTaskResultV2Schema)(cancel.result);
  });
});
