/**
 * `delegate subagent`, what the plugin's mod runs for a mapped Claude Code subagent call: a type
 * that only reads runs as an exploration, any other as a task in place, waited for; an unmapped
 * type exits 3 (the mod then lets Claude's own subagent run), and a project file cannot map one.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { readLedger } from '../../server/src/calls/ledger.ts';
import { CLI_BUNDLE } from '../helpers/cli-process.ts';
import { byAssistantTurn, type FakeReply } from '../helpers/fake-provider.ts';
import { taskTest } from '../helpers/task-world.ts';
import type { TempEnv } from '../helpers/temp-env.ts';
import { waitFor } from '../helpers/wait.ts';

const PROJECT = { 'README.md': '# shop\n', 'src/cart.ts': 'export const cart = [];\n' };

/** The built CLI in the project, the prompt on stdin, as the mod runs it. */
function subagent(world: TempEnv, type: string, prompt: string) {
  return cli(world, ['subagent', '--type', type, '-'], prompt);
}

function cli(world: TempEnv, args: string[], stdin = '') {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(
      process.execPath,
      [CLI_BUNDLE, ...args],
      { cwd: world.project, env: world.env, encoding: 'utf8' },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end(stdin);
  });
}

const it = taskTest
  .override('repository', PROJECT)
  .extend(
    'startWith',
    ({ world, provider }) =>
      async (replies: FakeReply[], subagents: Record<string, string>) => {
        const fake = await provider.start({ respond: byAssistantTurn(replies) });
        world.writeConfig({
          profiles: {
            w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm', local: true },
          },
          subagents,
        });
        return fake;
      },
  );

describe('delegate explore', () => {
  it('asks a question about the code from a terminal: the answer and the usage line on stdout', async ({
    startWith,
    world,
  }) => {
    await startWith([{ text: 'The cart is at src/cart.ts:7.' }], {});
    const run = await cli(world, ['explore', 'Where is the cart?']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('src/cart.ts:7 [unverified: the file has 1 line]');
    expect(run.stdout).toContain('[explore: profile w · model m · 1 turn');
  });
});

describe('delegate subagent', () => {
  it('a type mapped to "auto" runs on the profile routing chooses, with the reason last', async ({
    startWith,
    world,
  }) => {
    await startWith([{ text: 'The cart is at src/cart.ts:1.' }], { Explore: 'auto' });
    const run = await subagent(world, 'Explore', 'Where is the cart?');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('The cart is at src/cart.ts:1.');
    expect(run.stdout.trimEnd().split('\n').at(-1)).toBe(
      'auto: w — no verified explorations yet: exploring (the only candidate)',
    );
  });

  it('Explore runs as an exploration: the report, its references checked, counted as a subagent', async ({
    startWith,
    world,
  }) => {
    const fake = await startWith(
      [
        { toolUses: [{ name: 'read_file', input: { path: 'src/cart.ts' } }] },
        { text: 'The cart is at src/cart.ts:1.' },
      ],
      { Explore: 'w' },
    );
    const run = await subagent(world, 'Explore', 'Where is the cart?');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('The cart is at src/cart.ts:1.');
    expect(run.stdout).toContain('references: 1 checked against the files, all found');
    expect(run.stdout).toContain('[subagent on a worker: profile w');
    const offered = (fake.requests[0]!.body.tools as Array<{ function: { name: string } }>).map(
      (tool) => tool.function.name,
    );
    expect(offered).not.toContain('write_file');
    expect(new Set(readLedger(world.dataHome).map((record) => record.kind))).toEqual(
      new Set(['subagent']),
    );
  });

  it('a definition whose tools all read runs as an exploration with its prompt', async ({
    startWith,
    world,
  }) => {
    world.writeProjectFile(
      '.claude/agents/cart-finder.md',
      '---\nname: cart-finder\ndescription: finds carts\ntools: Read, Grep\n---\nYou find carts. CART-FINDER-PROMPT\n',
    );
    const fake = await startWith([{ text: 'src/cart.ts:1 holds it.' }], { 'cart-finder': 'w' });
    const run = await subagent(world, 'cart-finder', 'Find the cart.');
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.stringify(fake.requests[0]!.body.messages)).toContain('CART-FINDER-PROMPT');
    expect(run.stdout).toContain('[subagent on a worker: profile w');
  });

  it('a writing type runs as a task in place, waited for: its result is the report', async ({
    startWith,
    world,
  }) => {
    await startWith(
      [
        { toolUses: [{ name: 'write_file', input: { path: 'src/notes.md', content: 'n\n' } }] },
        { text: 'Wrote src/notes.md.' },
      ],
      { 'general-purpose': 'w' },
    );
    const run = await subagent(world, 'general-purpose', 'Write notes.');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^t_[a-z0-9]+ done/);
    expect(run.stdout).toContain('Wrote src/notes.md.');
    expect(run.stdout).toContain('A src/notes.md');
    // In place, as Claude's subagent would have written it.
    expect(readFileSync(join(world.project, 'src', 'notes.md'), 'utf8')).toBe('n\n');
  });

  it('a writing type whose worker dies: the report says the task was lost, at once', async ({
    startWith,
    world,
  }) => {
    await startWith([{ text: 'never sent', delayMs: 60_000 }], { 'general-purpose': 'w' });
    const running = subagent(world, 'general-purpose', 'Write notes.');
    const jobs = join(world.dataHome, 'jobs');
    const workerPid = () => {
      const [id] = existsSync(jobs) ? readdirSync(jobs) : [];
      const file = id ? join(jobs, id, 'job.json') : '';
      return file && existsSync(file)
        ? (JSON.parse(readFileSync(file, 'utf8')).worker?.pid as number | undefined)
        : undefined;
    };
    await waitFor(() => workerPid() !== undefined, 20_000);
    process.kill(workerPid()!, 'SIGKILL');
    const run = await running;
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^t_[a-z0-9]+ lost/);
  });

  it('an unmapped type exits 3 and sends nothing; a project file cannot map one', async ({
    startWith,
    world,
  }) => {
    const fake = await startWith([{ text: 'never' }], { Plan: 'w' });
    world.writeProjectFile(
      '.claude/delegate.json',
      JSON.stringify({ subagents: { Explore: 'w' } }),
    );
    const run = await subagent(world, 'Explore', 'Where?');
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('subagent type "Explore" is not mapped to a worker');
    expect(fake.requests).toHaveLength(0);
  });

  it('a worker that fails: exit 1 with one line, for the mod to fall back on', async ({
    startWith,
    world,
  }) => {
    await startWith([], { Explore: 'nope' });
    const run = await subagent(world, 'Explore', 'Where?');
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/unknown profile|nope/i);
  });
});
