import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { byAssistantTurn } from '../helpers/fake-provider.ts';
import { git } from '../helpers/git-project.ts';
import { taskTest } from '../helpers/task-world.ts';

/**
 * A test command that can never pass, whatever the worker writes, stops the task at its
 * preflight: no model call, and an error naming what is missing. The class is the toolchain
 * (a command, a manifest, a script, a target, a module); commands that run — passing or
 * failing, or failing on a test file the task may write — start the task.
 */
const CANNOT_RUN: Array<{ command: string; files?: Record<string, string>; says: RegExp }> = [
  { command: 'no-such-runner --all', says: /`no-such-runner` is not installed or not on PATH/ },
  { command: 'npm test', says: /there is no \S+\/package\.json/ },
  {
    command: 'npm test',
    files: { 'package.json': '{"name":"x","version":"1.0.0"}\n' },
    says: /package\.json has no `test` script/,
  },
  {
    command: 'npm run lint',
    files: { 'package.json': '{"name":"x","scripts":{"test":"true"}}\n' },
    says: /package\.json has no `lint` script/,
  },
  {
    command: 'npm test',
    files: { 'package.json': '{"name":"x","scripts":{"test":"no-such-jest --ci"}}\n' },
    says: /`no-such-jest` is not installed or not on PATH/,
  },
  { command: 'make test', says: /make finds no target `test`/ },
  { command: 'make test', files: { Makefile: 'build:\n\ttrue\n' }, says: /no target `test`/ },
  { command: 'make', says: /there is no Makefile/ },
  { command: 'python3 -m no_such_module_x', says: /Python module `no_such_module_x`/ },
  { command: './run-tests.sh', files: { 'run-tests.sh': 'true\n' }, says: /is not executable/ },
  { command: './missing.sh', says: /`\.\/missing\.sh` does not exist/ },
];

/** Commands that run: the task starts (the worker may make the failing ones pass). */
const RUNS: Array<{ command: string; files?: Record<string, string> }> = [
  { command: 'true' },
  { command: 'exit 3' },
  { command: 'node test.js' }, // a test file the task may write
  { command: 'bash -c "no-such-helper; exit 1"' }, // the code under test runs what is missing
  {
    command: 'npm test',
    files: { 'package.json': '{"name":"x","scripts":{"test":"node -e \\"process.exit(1)\\""}}\n' },
  },
];

/** The row's files, committed in a folder of their own; the task starts there. */
const it = taskTest.extend(
  'startIn',
  ({ world, provider, server }) =>
    async (command: string, files: Record<string, string> = {}) => {
      const fake = await provider.start({ respond: byAssistantTurn([{ text: 'Done.' }]) });
      world.writeConfig({
        profiles: {
          w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm', local: true },
        },
      });
      const handle = await server.start(world.env);
      mkdirSync(join(world.project, 'row'));
      for (const [name, text] of Object.entries(files)) {
        writeFileSync(join(world.project, 'row', name), text);
      }
      writeFileSync(join(world.project, 'row', '.keep'), '');
      if (files['run-tests.sh']) chmodSync(join(world.project, 'row', 'run-tests.sh'), 0o644);
      git(world.project, 'add', '-A');
      git(world.project, 'commit', '-qm', 'row');
      const started = await handle.callText('task_start', {
        task: 'Make the tests pass.',
        test_command: command,
        workdir: 'row',
        wait_s: 60,
      });
      return { text: started.text, calls: fake.requests.length };
    },
);

describe('a test command that cannot run stops the task before any model call', () => {
  it.for(CANNOT_RUN)('$command: refused', async (row, { startIn }) => {
    const { text, calls } = await startIn(row.command, row.files);
    expect(text).toMatch(/preflight: the test command cannot run \(exit /);
    expect(text).toMatch(row.says);
    expect(text).toContain('No model was called');
    expect(calls).toBe(0);
  });

  it.for(RUNS)('$command: starts', async (row, { startIn }) => {
    const { text, calls } = await startIn(row.command, row.files);
    expect(text).not.toContain('cannot run');
    expect(calls).toBeGreaterThan(0);
  });
});
