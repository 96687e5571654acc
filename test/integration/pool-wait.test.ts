import { describe, expect } from 'vitest';
import { taskTest } from '../helpers/task-world.ts';
import { pollTaskStatus, taskIdOf } from '../helpers/wait.ts';

/**
 * A wait for a pool slot is named where the user looks, at once, with who holds the slots; and
 * it ends within the profile's idle limit with the knobs to change. Profile `a` hangs on its
 * endpoint holding the one slot of pool `gpu`; profile `b` (idle limit 3 s) shares that pool.
 */
const it = taskTest.extend('world2', async ({ world, provider, server }) => {
  const fake = await provider.start({
    respond: (request) =>
      JSON.stringify(request.body).includes('HOLD') ? { kind: 'hang' } : { text: 'answer' },
  });
  const profile = (idleTimeoutS: number) => ({
    format: 'openai',
    baseUrl: fake.openaiBaseUrl,
    model: 'm',
    local: true,
    pool: 1,
    poolKey: 'gpu',
    idleTimeoutS,
  });
  world.writeConfig({ profiles: { a: profile(120), b: profile(3) } });
  const handle = await server.start(world.env);
  const holder = new AbortController();
  // The call that holds the slot: it hangs until the test ends.
  const held = handle.client
    .callTool({ name: 'delegate', arguments: { task: 'HOLD', profile: 'a' } }, undefined, {
      signal: holder.signal,
      timeout: 600_000,
    })
    .catch(() => undefined);
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  return {
    handle,
    fake,
    release: async () => {
      holder.abort();
      await held;
    },
  };
});

describe('waiting for a pool slot', () => {
  it('a one-shot says what it waits for at once, and fails in its idle limit with the knobs', async ({
    world2,
  }) => {
    const { handle, release } = world2;
    const progress: string[] = [];
    const started = Date.now();
    const result = await handle.client.callTool(
      { name: 'delegate', arguments: { task: 'Say hi', profile: 'b' } },
      undefined,
      { onprogress: (notification) => progress.push(notification.message ?? '') },
    );
    const text = (result.content as Array<{ text: string }>)[0]!.text;
    expect(result.isError, text).toBe(true);
    expect(progress[0]).toMatch(/^waiting for a pool slot on gpu \(1 of 1 busy: a\) for \d+ s$/);
    expect(text).toContain('No worker slot came free in 3 s');
    expect(text).toContain('raise "pool" in profile b');
    expect(text).toContain('"idleTimeoutS"');
    expect(text).toContain('delegate doctor');
    // Bounded by the idle limit, not the five minutes of old.
    expect(Date.now() - started).toBeLessThan(60_000);
    await release();
  });

  it('a task shows the wait in task_status, then ends with the knobs', async ({ world2 }) => {
    const { handle, release } = world2;
    const started = await handle.callText('task_start', { task: 'Fix it', profile: 'b' });
    const id = taskIdOf(started.text);
    const waiting = await pollTaskStatus(handle, id, /waiting for a pool slot/, 30_000);
    expect(waiting).toMatch(/waiting for a pool slot on gpu \(1 of 1 busy: a\) for \d+ s/);
    await pollTaskStatus(handle, id, /failed/, 60_000);
    const result = await handle.callText('task_result', { task_id: id });
    expect(result.text).toContain('No worker slot came free in 3 s');
    expect(result.text).toContain('"idleTimeoutS"');
    await release();
  });
});
