import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { taskTest as it } from '../helpers/task-world.ts';
import { taskIdOf } from '../helpers/wait.ts';

it.override('repository', null);

describe('automatic turn budget', () => {
  it('gives local profiles 80 turns and cloud ones 40, keeps asked budgets and caps them at 150', async ({
    world,
    provider,
    server: servers,
  }) => {
    const fake = await provider.start({ respond: () => ({ text: 'Nothing to do here.' }) });
    const endpoint = { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'worker-model' };
    world.writeConfig({
      defaultProfile: 'cloud',
      profiles: { local: { ...endpoint, local: true }, cloud: endpoint },
    });
    const server = await servers.start(world.env);
    const budgetOf = async (args: Record<string, unknown>): Promise<number> => {
      const started = await server.callText('task_start', {
        task: 'Look around',
        isolation: 'none',
        wait_s: 30,
        ...args,
      });
      expect(started.isError, started.text).toBe(false);
      const file = join(world.dataHome, 'jobs', taskIdOf(started.text), 'job.json');
      return (JSON.parse(readFileSync(file, 'utf8')) as { maxTurns: number }).maxTurns;
    };
    expect(await budgetOf({ profile: 'local' })).toBe(80);
    expect(await budgetOf({ profile: 'cloud' })).toBe(40);
    expect(await budgetOf({})).toBe(40);
    expect(await budgetOf({ profile: 'local', max_turns: 7 })).toBe(7);
    expect(await budgetOf({ profile: 'cloud', max_turns: 400 })).toBe(150);
    // The plugin's summarizer sets max-turns: 20 in its front matter.
    expect(await budgetOf({ profile: 'local', agent: 'summarizer' })).toBe(20);
  });
});
