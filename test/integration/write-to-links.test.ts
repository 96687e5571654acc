import {
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import type { FakeReply } from '../helpers/fake-provider.ts';
import type { ServerHandle } from '../helpers/mcp-server.ts';
import { taskTest } from '../helpers/task-world.ts';
import type { TempEnv } from '../helpers/temp-env.ts';

/**
 * `write_to` (delegate, delegate_batch) never follows or replaces a symbolic link: not at the
 * file, not at a folder between the project and it — whether the link points out of the
 * project or inside it, and whether it was there before the call or planted while the model
 * answered. Each refusal is one line, before any model call when the link was already there.
 */
const it = taskTest.extend(
  'withWorker',
  ({ world, provider, server }) =>
    async (respond: () => FakeReply = () => ({ text: 'the answer' })): Promise<ServerHandle> => {
      const fake = await provider.start({ respond });
      world.writeConfig({
        profiles: { w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm', local: true } },
      });
      return server.start();
    },
);
it.override('repository', null);

const ORIGINAL = 'the user’s own text\n';

/** Links a test plants, each with the write_to that meets it; the files they lead to hold ORIGINAL. */
const LINKS: Array<[string, (world: TempEnv) => string, RegExp]> = [
  [
    'the file, linked out of the project',
    (world) => {
      writeFileSync(join(world.root, 'outside.md'), ORIGINAL);
      symlinkSync(join(world.root, 'outside.md'), join(world.project, 'answer.md'));
      return 'answer.md';
    },
    /write_to "answer\.md" is a symbolic link \(.*answer\.md\); delegate never writes through or over a link/,
  ],
  [
    'the file, linked inside the project',
    (world) => {
      world.writeProjectFile('README.md', ORIGINAL);
      symlinkSync('README.md', join(world.project, 'answer.md'));
      return 'answer.md';
    },
    /is a symbolic link/,
  ],
  [
    'the file, a dangling link',
    (world) => {
      symlinkSync(join(world.root, 'not-yet.md'), join(world.project, 'answer.md'));
      return 'answer.md';
    },
    /is a symbolic link/,
  ],
  [
    'a folder, linked out of the project',
    (world) => {
      mkdirSync(join(world.root, 'elsewhere'));
      writeFileSync(join(world.root, 'elsewhere', 'answer.md'), ORIGINAL);
      symlinkSync(join(world.root, 'elsewhere'), join(world.project, 'docs'));
      return 'docs/answer.md';
    },
    /write_to "docs\/answer\.md" goes through a symbolic link \(.*docs\)/,
  ],
  [
    'a folder, linked inside the project',
    (world) => {
      world.writeProjectFile('real/answer.md', ORIGINAL);
      symlinkSync('real', join(world.project, 'docs'));
      return 'docs/new/answer.md';
    },
    /goes through a symbolic link/,
  ],
];

/** Every entry under the temp root, with each link's target: what must not change. */
function snapshot(world: TempEnv): string[] {
  return readdirSync(world.root, { recursive: true, encoding: 'utf8' })
    .filter((path) => !path.startsWith('data'))
    .map((path) => {
      const full = join(world.root, path);
      const info = lstatSync(full);
      if (info.isSymbolicLink()) return `${path} -> ${readlinkSync(full)}`;
      return info.isFile() ? `${path}: ${readFileSync(full, 'utf8')}` : path;
    })
    .sort();
}

describe('write_to never follows or replaces a link', () => {
  it.for(LINKS)(
    'delegate: %s is refused before the call, and nothing changes',
    async ([, plant, says], { withWorker, world, provider }) => {
      const server = await withWorker();
      const writeTo = plant(world);
      const before = snapshot(world);
      const refused = await server.callText('delegate', { task: 'Draft', write_to: writeTo });
      expect(refused.isError, refused.text).toBe(true);
      expect(refused.text).toMatch(says);
      expect(refused.text.split('\n')).toHaveLength(1);
      expect(provider.started!.requests).toHaveLength(0);
      expect(snapshot(world)).toEqual(before);
    },
  );

  it('delegate_batch: only the job whose write_to is a link fails', async ({
    withWorker,
    world,
  }) => {
    const server = await withWorker();
    const writeTo = LINKS[0]![1](world);
    const batch = await server.callText('delegate_batch', {
      jobs: [
        { task: 'Draft', write_to: writeTo },
        { task: 'Draft', write_to: 'fine.md' },
      ],
    });
    expect(batch.text).toMatch(/is a symbolic link/);
    expect(readFileSync(join(world.project, 'fine.md'), 'utf8')).toBe('the answer');
    expect(readFileSync(join(world.root, 'outside.md'), 'utf8')).toBe(ORIGINAL);
    expect(lstatSync(join(world.project, 'answer.md')).isSymbolicLink()).toBe(true);
  });

  it('a link planted while the model answers is refused too: the answer is kept under the data home', async ({
    withWorker,
    world,
  }) => {
    writeFileSync(join(world.root, 'outside.md'), ORIGINAL);
    const server = await withWorker(() => {
      symlinkSync(join(world.root, 'outside.md'), join(world.project, 'answer.md'));
      return { text: 'the answer' };
    });
    const { text, isError } = await server.callText('delegate', {
      task: 'Draft',
      write_to: 'answer.md',
    });
    expect(isError, text).toBe(false);
    expect(text).toMatch(
      /^Could not write the answer to .*answer\.md \(write_to "answer\.md" is a symbolic link .*\); it was saved to (\S+) instead\./,
    );
    const saved = /it was saved to (\S+) instead/.exec(text)![1]!;
    expect(readFileSync(saved, 'utf8')).toBe('the answer');
    expect(readFileSync(join(world.root, 'outside.md'), 'utf8')).toBe(ORIGINAL);
    expect(lstatSync(join(world.project, 'answer.md')).isSymbolicLink()).toBe(true);
  });
});
