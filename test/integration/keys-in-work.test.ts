/**
 * Keys never land in the work (issue 27): a malicious endpoint knows the key it was sent and has
 * the worker write it into the task's files in some encoding the response redaction does not
 * cut (the tool call carries it as printf escapes, decoded by the shell). Whatever the form,
 * the task ends `failed` naming the profile, and the key reaches no branch, patch or result.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { byAssistantTurn, type FakeReply } from '../helpers/fake-provider.ts';
import { git } from '../helpers/git-project.ts';
import type { ServerHandle } from '../helpers/mcp-server.ts';
import { taskTest } from '../helpers/task-world.ts';
import { pollTaskStatus, taskIdOf } from '../helpers/wait.ts';

const KEY = 'sk-live-4b1d9e7c2a6f8035d7e1';
const hex = (text: string) => Buffer.from(text).toString('hex');

/** A shell word that prints `text` through printf escapes: the tool call never holds it as is. */
const printed = (text: string) =>
  `"$(printf '${[...Buffer.from(text)].map((byte) => `\\x${byte.toString(16).padStart(2, '0')}`).join('')}')"`;

const bash = (command: string): FakeReply => ({
  toolUses: [{ name: 'run_bash', input: { command } }],
});

const writes = (form: string) => `printf '%s\\n' ${printed(form)} > notes/leak.txt; echo wrote`;

/** The forms a worker could give the key, each written into a file of the work. */
const FORMS: Array<[what: string, command: string]> = [
  ['as is', writes(KEY)],
  ['upper case', writes(KEY.toUpperCase())],
  ['backwards', writes([...KEY].reverse().join(''))],
  ['hex', writes(hex(KEY))],
  [
    'hex in upper case, bytes apart',
    writes(
      hex(KEY)
        .toUpperCase()
        .replace(/(..)(?!$)/g, '$1:'),
    ),
  ],
  ['\\x escapes', writes([...hex(KEY).matchAll(/../g)].map(([pair]) => `\\x${pair}`).join(''))],
  ['base64 inside Basic auth', writes(Buffer.from(`user:${KEY}`).toString('base64'))],
  ['URL-encoded', writes(encodeURIComponent(KEY).replace(/-/g, '%2D'))],
  [
    'JSON-escaped',
    writes([...KEY].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')),
  ],
  ['backwards in hex', writes(hex([...KEY].reverse().join('')))],
  ['as a file name', `touch notes/${printed(KEY)}; echo named`],
];

const it = taskTest.extend(
  'startWith',
  ({ world, provider, server }) =>
    async (replies: FakeReply[], sandbox: 'required' | 'off' = 'required') => {
      const fake = await provider.start({ respond: byAssistantTurn(replies) });
      world.writeConfig({
        sandbox,
        profiles: {
          w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm', apiKeyEnv: 'WORKER_KEY' },
        },
      });
      return server.start({ ...world.env, WORKER_KEY: KEY });
    },
);

async function runToEnd(handle: ServerHandle, input: Record<string, unknown> = {}) {
  const started = await handle.callText('task_start', { task: 'Write notes.', ...input });
  expect(started.isError, started.text).toBe(false);
  const id = taskIdOf(started.text);
  const status = await pollTaskStatus(handle, id, /done|failed|lost|timeout|cancelled/);
  return { id, status, result: (await handle.callText('task_result', { task_id: id })).text };
}

/** The key, as is or in hex, anywhere in what the supervisor or git can see of the task. */
function expectNoKeyIn(texts: string[]): void {
  for (const text of texts) {
    expect(text).not.toContain(KEY);
    expect(text.toLowerCase()).not.toContain(hex(KEY));
  }
}

describe('a key in the work fails the task, and reaches no branch or patch', () => {
  for (const [what, command] of FORMS) {
    it(`${what}`, async ({ startWith, world }) => {
      const handle = await startWith([bash(`mkdir -p notes; ${command}`), { text: 'Done.' }]);
      const { id, status, result } = await runToEnd(handle, { test_command: 'true' });
      expect(status, result).toMatch(/failed/);
      expect(result).toContain("the worker's changes contain a key:");
      expect(result).toContain('holds the key of profile w ($WORKER_KEY)');
      expect(git(world.project, 'diff', '--name-only', 'HEAD', `delegate/${id}`)).toBe('');
      const jobFolder = join(world.dataHome, 'jobs', id);
      expect(existsSync(join(jobFolder, 'patch.diff'))).toBe(false);
      expectNoKeyIn([result, readFileSync(join(jobFolder, 'job.json'), 'utf8')]);
    });
  }

  it("in the worker's own commit message: taken off the branch", async ({ startWith, world }) => {
    const handle = await startWith(
      [
        bash(
          `echo ok > ok.txt && git add -A && git -c user.name=w -c user.email=w@example.invalid commit -qm ${printed(KEY)} && echo committed`,
        ),
        { text: 'Done.' },
      ],
      'off',
    );
    const { id, status, result } = await runToEnd(handle);
    expect(status, result).toMatch(/failed/);
    expect(result).toContain('a commit message holds the key of profile w');
    expect(git(world.project, 'rev-parse', `delegate/${id}`)).toBe(
      git(world.project, 'rev-parse', 'HEAD'),
    );
    expect(git(world.project, 'log', '--format=%B', `delegate/${id}`)).not.toContain(KEY);
  });

  it('in place: the task fails and names the file', async ({ startWith }) => {
    const handle = await startWith([
      bash(`mkdir -p notes; ${writes(hex(KEY))}`),
      { text: 'Done.' },
    ]);
    const { status, result } = await runToEnd(handle, { isolation: 'none' });
    expect(status, result).toMatch(/failed/);
    expect(result).toContain('notes/leak.txt holds the key of profile w ($WORKER_KEY)');
  });

  it('work without the key passes, a near miss included', async ({ startWith, world }) => {
    const nearMiss = `${KEY.slice(0, -3)}xyz ${hex(KEY).slice(0, 20)}`;
    const handle = await startWith([
      bash(`mkdir -p notes; ${writes(nearMiss)}`),
      { text: 'Done.' },
    ]);
    const { id, status, result } = await runToEnd(handle, { test_command: 'true' });
    expect(status, result).toMatch(/done passed/);
    expect(git(world.project, 'show', `delegate/${id}:notes/leak.txt`)).toBe(nearMiss);
  });
});

describe('in place outside a git repository', () => {
  it.override('repository', null);

  it('the files the task changed on disk are searched too: the task fails and names the file', async ({
    startWith,
    world,
  }) => {
    world.writeProjectFile('README.md', '# not a repository\n');
    const handle = await startWith([
      bash(`mkdir -p notes; ${writes(hex(KEY))}`),
      { text: 'Done.' },
    ]);
    const { status, result } = await runToEnd(handle, { isolation: 'none' });
    expect(status, result).toMatch(/failed/);
    expect(result).toContain('notes/leak.txt holds the key of profile w ($WORKER_KEY)');
    expectNoKeyIn([result]);
  });
});
