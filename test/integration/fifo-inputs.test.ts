import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { taskTest } from '../helpers/task-world.ts';

/**
 * A FIFO nobody writes to, named where a file is expected. Reading it used to wait forever on
 * one of libuv's four file-system threads; four such calls took them all and every later
 * call hung. Each call here would then never answer, and the test would time out.
 */
const it = taskTest.extend('served', async ({ world, provider, server }) => {
  world.writeProjectFile('notes.txt', 'the notes\n');
  execFileSync('mkfifo', [join(world.project, 'pipe')]);
  const fake = await provider.start({
    respond: () => ({ text: 'The worker answer.', model: 'm' }),
  });
  world.writeConfig({
    profiles: {
      local: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm', local: true },
    },
  });
  return { fake, server: await server.start(world.env) };
});
it.override('repository', null);

const FIFO_REFUSED = /^files\[0\] "pipe" is a FIFO \(named pipe\), not a regular file; /;

describe('a FIFO where a file is expected', () => {
  it('is refused at once in files, and costs no model call', async ({ served }) => {
    const { text, isError } = await served.server.callText('delegate', {
      task: 'Summarise',
      files: ['pipe'],
    });
    expect(isError).toBe(true);
    expect(text).toMatch(FIFO_REFUSED);
    expect(served.fake.requests).toHaveLength(0);
  });

  it('four such calls in flight do not keep a later delegate from answering', async ({
    served,
  }) => {
    const stuck = Array.from({ length: 4 }, () =>
      served.server.callText('delegate', { task: 'Summarise', files: ['pipe'] }),
    );
    const later = served.server.callText('delegate', { task: 'Summarise', files: ['notes.txt'] });
    const [answer, ...refused] = await Promise.all([later, ...stuck]);
    expect(answer.isError).toBe(false);
    expect(answer.text).toContain('The worker answer.');
    for (const result of refused) {
      expect(result.isError).toBe(true);
      expect(result.text).toMatch(FIFO_REFUSED);
    }
    expect(served.fake.requests).toHaveLength(1);
    expect(JSON.stringify(served.fake.requests[0]!.body)).toContain('the notes');
  });

  it('fails only its own job in a batch', async ({ served }) => {
    const { text, isError } = await served.server.callText('delegate_batch', {
      jobs: [
        ...Array.from({ length: 4 }, () => ({ task: 'Summarise', files: ['pipe'] })),
        { task: 'Summarise', files: ['notes.txt'] },
      ],
    });
    expect(isError).toBe(false);
    expect(text).toMatch(/^1 of 5 jobs succeeded\./);
    expect(text.match(/is a FIFO \(named pipe\)/g)).toHaveLength(4);
    expect(text).toContain('## job 5: ok\nThe worker answer.');
  });

  it('named as an agent file, is left out of agents_list', async ({ world, served }) => {
    const agents = join(world.project, '.claude', 'agents');
    mkdirSync(agents, { recursive: true });
    execFileSync('mkfifo', [join(agents, 'stuck.md')]);
    const { text, isError } = await served.server.callText('agents_list', {});
    expect(isError).toBe(false);
    expect(text).not.toContain('stuck');
  });
});
