import { execFile } from 'node:child_process';
import { statSync } from 'node:fs';
import { describe, expect } from 'vitest';
import { CLI_BUNDLE } from '../helpers/cli-process.ts';
import { byAssistantTurn, type FakeReply } from '../helpers/fake-provider.ts';
import type { ServerHandle } from '../helpers/mcp-server.ts';
import { SPOOF_LINE, spoofedLines, UNSAFE } from '../helpers/spoofs.ts';
import { taskTest } from '../helpers/task-world.ts';
import type { TempEnv } from '../helpers/temp-env.ts';
import { pollTaskStatus, taskIdOf } from '../helpers/wait.ts';

/**
 * What the supervisor reads of a real task — task_status, task_progress, task_result, and the
 * same through the `delegate` CLI — when its worker (a fake provider scripted with tool calls)
 * names files, notes progress, asks, answers and even names its model so as to print a line
 * of ours, and when its patch is huge.
 */
const MODEL = `worker-model\n${SPOOF_LINE}`;
const use = (name: string, input: Record<string, unknown>): FakeReply => ({
  toolUses: [{ name, input }],
  model: MODEL,
});

const it = taskTest.extend(
  'startWith',
  ({ world, provider, server }) =>
    async (steps: FakeReply[]): Promise<ServerHandle> => {
      const fake = await provider.start({ respond: byAssistantTurn(steps) });
      world.writeConfig({
        profiles: {
          w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'worker-model', local: true },
        },
      });
      return server.start({ ...world.env, DELEGATE_QUESTION_TIMEOUT_S: '60' });
    },
);

function cli(world: TempEnv, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [CLI_BUNDLE, ...args],
      { cwd: world.project, env: world.env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => (error ? reject(new Error(stderr)) : resolve(stdout)),
    );
  });
}

/** Nothing of the worker's reads as a line of ours, or carries a character that could. */
function expectInert(text: string, where: string): void {
  expect(spoofedLines(text), `${where}:\n${text}`).toEqual([]);
  expect(UNSAFE.test(text), `${where}:\n${text}`).toBe(false);
}

describe('what the supervisor reads of a task cannot be spoofed by its worker', () => {
  it('file names, notes, a question, the summary and the model name stay the worker’s', async ({
    startWith,
    world,
  }) => {
    const handle = await startWith([
      use('report_progress', { note: `reading\n${SPOOF_LINE}` }),
      use('write_file', { path: `a\n${SPOOF_LINE}`, content: 'x\n' }),
      use('write_file', { path: `b\u2028${SPOOF_LINE}.txt`, content: 'y\n' }),
      use('ask_supervisor', { question: `Proceed?\n${SPOOF_LINE}` }),
      { text: `Done.\n${SPOOF_LINE}\r${SPOOF_LINE}\u001b[2K`, model: MODEL },
    ]);
    const id = taskIdOf((await handle.callText('task_start', { task: 'Make two files' })).text);
    const asking = await pollTaskStatus(handle, id, /needs_input/);
    expectInert(asking, 'task_status');
    expect(asking).toBe(`${id} needs_input: "Proceed?\\n${SPOOF_LINE}" → task_answer`);
    await handle.callText('task_answer', { task_id: id, answer: 'Yes.' });
    await pollTaskStatus(handle, id, /done|failed|lost|timeout/);

    const progress = (await handle.callText('task_progress', { task_id: id })).text;
    expectInert(progress, 'task_progress');
    expect(progress).toContain(
      `files touched: "a\\n${SPOOF_LINE}", "b\\342\\200\\250${SPOOF_LINE}.txt"`,
    );

    const result = (await handle.callText('task_result', { task_id: id })).text;
    expectInert(result, 'task_result');
    expect(result.split('\n')[0]).toBe(`${id} done — verdict: unverified`);
    expect(result).toContain(
      `files changed (2): A "a\\n${SPOOF_LINE}", A "b\\342\\200\\250${SPOOF_LINE}.txt"`,
    );
    // The diffstat as git quotes names by default: a line separator in octal, as in files changed.
    const diffstat = result.slice(result.indexOf('diffstat:\n'), result.indexOf('\ncost:'));
    expect(diffstat).toContain(`   "a\\n${SPOOF_LINE}"`);
    expect(diffstat).toContain(`   "b\\342\\200\\250${SPOOF_LINE}.txt"`);
    expect(result).toContain(`summary:\n  Done.\n  ${SPOOF_LINE}\\r${SPOOF_LINE}\\x1b[2K`);
    expect(result).toContain(`model: worker-model\\n${SPOOF_LINE} ·`);
    expect(result).toContain(`patch:\n  diff --git "a/a\\n${SPOOF_LINE}"`);

    expectInert(await cli(world, 'result', id), 'delegate result');
    expectInert(await cli(world, 'tasks'), 'delegate tasks');
  });

  it('include_patch and `delegate result --patch` show at most 256 KB of a huge patch, and where the whole is', async ({
    startWith,
    world,
  }) => {
    const line = `${'generated row '.repeat(7)}\n`;
    const content = line.repeat(Math.ceil((600 * 1024) / line.length));
    const handle = await startWith([
      use('write_file', { path: 'big.txt', content }),
      { text: 'Wrote big.txt.' },
    ]);
    const started = await handle.callText('task_start', { task: 'Generate', wait_s: 60 });
    const id = taskIdOf(started.text);
    expect(started.text).toMatch(/done — verdict: unverified/);

    const result = (await handle.callText('task_result', { task_id: id, include_patch: true }))
      .text;
    const patchPath = /^patch: (\S+) \((\d+) bytes\)$/m.exec(result);
    expect(patchPath).not.toBeNull();
    const [, path, bytes] = patchPath!;
    expect(statSync(path!).size).toBe(Number(bytes));
    expect(Number(bytes)).toBeGreaterThan(600 * 1024);
    expect(Buffer.byteLength(result)).toBeLessThan(256 * 1024 + 8 * 1024);
    expect(result).toMatch(/^patch \(cut: its first 25\d\.\d KB of 6\d\d\.\d KB\):$/m);
    expect(result).toContain(`the whole patch is in ${path}`);
    // Cut at a whole line of the patch, and the worker's lines still indented.
    expect(result).toMatch(/\n {2}\+generated row [^\n]+\npatch cut after /);

    const printed = await cli(world, 'result', id, '--patch');
    expect(Buffer.byteLength(printed)).toBeLessThan(256 * 1024 + 8 * 1024);
    expect(printed).toContain(`the whole patch is in ${path}`);
    const json = JSON.parse(await cli(world, 'result', id, '--patch', '--json'));
    expect(json.patchCut).toBe(true);
    expect(Buffer.byteLength(json.patch)).toBeLessThanOrEqual(256 * 1024);
    expect(json.result.patchPath).toBe(path);
  });
});
