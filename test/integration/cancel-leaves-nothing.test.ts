import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCliWorld, type CliWorld } from '../helpers/cli-engine-world.ts';
import { startServer, type ServerHandle } from '../helpers/mcp-server.ts';
import { endTaskTest, liveProcesses } from '../helpers/processes.ts';
import { settle } from '../helpers/timing.ts';
import { taskIdOf, waitFor } from '../helpers/wait.ts';

// task_cancel returns once every process of the task is gone: the worker, the CLI, what the CLI
// started — inside the OS sandbox (its own session and PID namespace) or not. A stand-in `claude`
// plays each kind of process tree; every one is named by a sleep of its own length.

let world: CliWorld;
let server: ServerHandle | undefined;
beforeEach(() => {
  world = createCliWorld();
});
afterEach(async () => {
  await endTaskTest(world, server);
  server = undefined;
});

let nonce = 0;
const TREES: Array<[string, (sleep: string) => string]> = [
  ['a CLI that waits', (sleep) => `exec ${sleep}`],
  ['a CLI that ignores SIGTERM', (sleep) => `trap '' TERM; ${sleep} & ${sleep} & wait`],
  ['a CLI whose child leaves its session', (sleep) => `setsid ${sleep} & exec ${sleep}`],
  ['a CLI that keeps starting processes', (sleep) => `while :; do ${sleep} & sleep 0.05; done`],
];
const MODES: Array<[string, Record<string, string>]> = [
  ['in the OS sandbox', {}],
  ['unsandboxed', { DELEGATE_BWRAP_PATH_FOR_TEST: '/nonexistent' }],
];

/** Live processes whose command line holds `marker`, or whose environment names the task. */
function processesOf(marker: string, id: string): number[] {
  return liveProcesses(({ pid, commandLine }) => {
    if (commandLine.includes(marker)) return true;
    try {
      return readFileSync(`/proc/${pid}/environ`, 'latin1').includes(`DELEGATE_TASK_ID=${id}\0`);
    } catch {
      return false;
    }
  });
}

async function startTask(env: Record<string, string>, script: (sleep: string) => string) {
  nonce += 1;
  const marker = `sleep 3600.${process.pid}${nonce}`;
  world.writeConfig({ profiles: { cc: { format: 'claude-cli', model: 'sonnet' } } });
  world.writeBinary('claude', `#!/bin/bash\n${script(marker)}\n`);
  server = await startServer({ ...world.env, ...env });
  const started = await server.callText('task_start', { task: 'Wait', isolation: 'none' });
  expect(started.isError, started.text).toBe(false);
  return { id: taskIdOf(started.text), marker };
}

describe('task_cancel leaves no process behind when it returns', () => {
  for (const [mode, env] of MODES) {
    for (const [tree, script] of TREES) {
      it(`${tree}, ${mode}`, async () => {
        const { id, marker } = await startTask(env, script);
        await waitFor(
          () => liveProcesses((facts) => facts.commandLine.includes(marker)).length > 0,
        );
        const cancelled = await server!.callText('task_cancel', { task_id: id });
        expect(cancelled.text).toMatch(new RegExp(`^${id} cancelled`));
        expect(cancelled.text).not.toContain('Still stopping');
        expect(processesOf(marker, id)).toEqual([]);
      });
    }
  }

  it('a task cancelled before its CLI started: none starts afterwards', async () => {
    const { id, marker } = await startTask({}, (sleep) => `exec ${sleep}`);
    const cancelled = await server!.callText('task_cancel', { task_id: id });
    expect(cancelled.text).not.toContain('Still stopping');
    expect(processesOf(marker, id)).toEqual([]);
    await settle(2_000);
    expect(processesOf(marker, id)).toEqual([]);
  });
});
