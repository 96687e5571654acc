// A task worker reads its config at every model call without the zod schemas: what its server
// validated comes with the word to go. A file changed during the task is validated by the
// worker itself (it loads the schemas then), so a change still takes effect at the next call
// and a broken one still fails the task with the field at fault.
import { describe, expect } from 'vitest';
import type { RecordedRequest } from '../helpers/fake-provider.ts';
import { taskTest as it } from '../helpers/task-world.ts';

const profile = (baseUrl: string, model: string, extra: Record<string, unknown> = {}) => ({
  profiles: { w: { format: 'openai', baseUrl, model, local: true, ...extra } },
});

describe('the config in a task worker', () => {
  it('takes a change made during the task at the next call, and refuses a broken one', async ({
    world,
    provider,
    server,
  }) => {
    let baseUrl = '';
    const fake = await provider.start({
      respond: (request: RecordedRequest) => {
        // Each answer first changes the config the worker's next call reads.
        world.writeConfig(
          request.index === 0
            ? profile(baseUrl, 'changed-model')
            : profile(baseUrl, 'broken-model', { colour: 'blue' }),
        );
        return { toolUses: [{ name: 'report_progress', input: { note: 'working' } }] };
      },
    });
    baseUrl = fake.openaiBaseUrl;
    world.writeConfig(profile(baseUrl, 'first-model'));
    const handle = await server.start();
    const started = await handle.callText('task_start', { task: 'Work', wait_s: 30 });
    expect(fake.requests.map((request) => request.body.model)).toEqual([
      'first-model',
      'changed-model',
    ]);
    expect(started.text).toContain('failed');
    expect(started.text).toMatch(
      /error: Invalid config in \S*config\.json:\S* profiles\.w: unknown field "colour"/,
    );
  });
});
