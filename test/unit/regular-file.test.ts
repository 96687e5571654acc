import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listAgents } from '../../server/src/agent/agents.ts';
import {
  FILE_AND_SHELL_TOOLS,
  type WorkerToolContext,
} from '../../server/src/agent/worker-tools/index.ts';
import {
  readRegularFile,
  readRegularFileSync,
  writeRegularFile,
} from '../../server/src/util/regular-file.ts';
import { UserError } from '../../server/src/util/user-error.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';

/**
 * Everything that reads or writes a named file for a worker refuses a FIFO at once. Without
 * the check each of these calls waits for a writer (or reader) that never comes, and the
 * test times out instead of failing on an assertion.
 */
let world: TempEnv;
let fifo: string;
let context: WorkerToolContext;
beforeEach(() => {
  world = createTempEnv();
  fifo = join(world.project, 'pipe');
  execFileSync('mkfifo', [fifo]);
  writeFileSync(join(world.project, 'notes.txt'), 'hello\n');
  context = { root: world.project, env: {} };
});
afterEach(() => world.cleanup());

const call = (name: string, input: unknown) => {
  const tool = FILE_AND_SHELL_TOOLS.find((candidate) => candidate.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  return tool.run(input, context);
};

describe('regular files only', () => {
  it('reads and writes regular files as before', async () => {
    const path = join(world.project, 'notes.txt');
    expect((await readRegularFile(path, 'notes.txt')).toString()).toBe('hello\n');
    expect(readRegularFileSync(path, 'notes.txt').toString()).toBe('hello\n');
    await writeRegularFile(path, 'shorter', 'notes.txt');
    expect(readFileSync(path, 'utf8')).toBe('shorter');
  });

  it.each([
    ['readRegularFile', () => readRegularFile(fifo, 'pipe'), 'read'],
    [
      'readRegularFileSync',
      () => Promise.resolve().then(() => readRegularFileSync(fifo, 'pipe')),
      'read',
    ],
    ['writeRegularFile', () => writeRegularFile(fifo, 'x', 'pipe'), 'written'],
  ])('%s refuses a FIFO on the descriptor, without waiting', async (_name, run, verb) => {
    const error: unknown = await run().then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(UserError);
    expect((error as Error).message).toBe(
      `pipe is a FIFO (named pipe), not a regular file: only regular files are ${verb}.`,
    );
  });

  it.each([
    ['read_file', { path: 'pipe' }],
    ['grep', { pattern: 'x', path: 'pipe' }],
    ['edit_file', { path: 'pipe', old_text: 'a', new_text: 'b' }],
    ['write_file', { path: 'pipe', content: 'x' }],
  ])('worker tool %s answers a FIFO with an error', async (name, input) => {
    const result = await call(name, input);
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/^pipe is a FIFO \(named pipe\), not a regular file: /);
  });

  it('grep over a folder holding a FIFO searches the rest', async () => {
    const result = await call('grep', { pattern: 'hello' });
    expect(result).toEqual({ content: 'notes.txt:1:hello' });
  });

  it('the agent lookup skips an agent file that is a FIFO', () => {
    const agents = join(world.project, '.claude', 'agents');
    mkdirSync(agents, { recursive: true });
    execFileSync('mkfifo', [join(agents, 'stuck.md')]);
    writeFileSync(join(agents, 'fine.md'), '---\ndescription: Fine\n---\nBody');
    const listed = listAgents({
      projectDir: world.project,
      home: world.home,
      pluginRoot: world.root,
    });
    expect(listed.map((agent) => agent.name)).toEqual(['fine']);
  });
});
