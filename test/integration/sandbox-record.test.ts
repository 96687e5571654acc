import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { checkJobSandbox } from '../../server/src/sandbox/task-sandbox.ts';
import {
  SANDBOX_RECORD_MAX_AGE_MS,
  sandboxRecordPath,
} from '../../server/src/sandbox/sandbox-record.ts';
import { byAssistantTurn, type FakeReply } from '../helpers/fake-provider.ts';
import type { ServerHandle } from '../helpers/mcp-server.ts';
import { taskTest } from '../helpers/task-world.ts';
import type { TempEnv } from '../helpers/temp-env.ts';
import { pollTaskStatus, taskIdOf } from '../helpers/wait.ts';

// A passed sandbox check is kept in the data home for the processes after it
// (server/src/sandbox/sandbox-record.ts). Each server here is a process of its own, so only the
// record can spare one the probe. Bubblewrap is a logging wrapper around the real one: its log
// says which process ran a probe.

/** The probe's command, as bubblewrap gets it (sandbox-session.ts: `true` in bash), on one line. */
const PROBE = /bash -c true'?$/;

interface LoggedBubblewrap {
  env: Record<string, string>;
  /** The probes run so far by servers (task_start), and by task workers. */
  probes(): number;
  workerProbes(): number;
  /** Every run so far: who ran it (a task id, or "server") and its arguments, on a line. */
  runs(): string[];
  /** Makes it fail every run from now on, keeping its identity (path, inode, size, times). */
  breakKeepingIdentity(): void;
}

function loggedBubblewrap(world: TempEnv): LoggedBubblewrap {
  const real = execFileSync('sh', ['-c', 'command -v bwrap'], { encoding: 'utf8' }).trim();
  const wrapper = join(world.root, 'bwrap');
  const log = join(world.root, 'bwrap.log');
  const body = (last: string) =>
    `#!/bin/sh\nline="$\{DELEGATE_TASK_ID:-server} $(printf '%s' "$*" | tr '\\n' ' ')"\nprintf '%s\\n' "$line" >> '${log}'\n${last}\n`.padEnd(
      250,
      '#',
    );
  writeFileSync(wrapper, `${body(`exec '${real}' "$@"`)}\n`);
  chmodSync(wrapper, 0o755);
  // Whole seconds: a file time set again to the same value then reads back exactly.
  const time = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000);
  utimesSync(wrapper, time, time);
  const runs = () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').slice(0, -1) : []);
  return {
    env: { DELEGATE_BWRAP_PATH_FOR_TEST: wrapper },
    runs,
    probes: () => runs().filter((line) => line.startsWith('server ') && PROBE.test(line)).length,
    workerProbes: () =>
      runs().filter((line) => !line.startsWith('server ') && PROBE.test(line)).length,
    breakKeepingIdentity() {
      const before = statSync(wrapper);
      const broken = `${body('echo "bwrap: No permissions to create new namespace" >&2; exit 1')}\n`;
      expect(broken.length).toBe(readFileSync(wrapper, 'utf8').length);
      writeFileSync(wrapper, broken);
      utimesSync(wrapper, time, time);
      expect(statSync(wrapper)).toMatchObject({
        ino: before.ino,
        size: before.size,
        mtimeMs: before.mtimeMs,
      });
    },
  };
}

const recordOf = (world: TempEnv) =>
  JSON.parse(readFileSync(sandboxRecordPath(world.dataHome), 'utf8')) as {
    checkedAt: number;
    warnings: string[];
  };

const jobOf = (world: TempEnv, id: string) =>
  JSON.parse(readFileSync(join(world.dataHome, 'jobs', id, 'job.json'), 'utf8'));

const it = taskTest.extend(
  'startWith',
  ({ world, provider, server }) =>
    async (steps: FakeReply[], env: Record<string, string>): Promise<ServerHandle> => {
      const fake = await provider.start({ respond: byAssistantTurn(steps) });
      world.writeConfig({
        sandbox: 'auto',
        profiles: {
          w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'worker-model', local: true },
        },
      });
      return server.start({ ...world.env, ...env });
    },
);

/** Starts a task on `handle` and waits for it to end: its id and final status line. */
async function runTask(handle: ServerHandle, task: string): Promise<{ id: string; line: string }> {
  const started = await handle.callText('task_start', { task });
  expect(started.isError, started.text).toBe(false);
  const id = taskIdOf(started.text);
  const line = await pollTaskStatus(handle, id, /done|failed|lost|timeout/, 60_000);
  return { id, line };
}

describe.runIf(process.platform === 'linux')('the sandbox check on record', () => {
  it('a passed check spares the next process its probe, until it is old or bubblewrap changes', async ({
    startWith,
    server,
    world,
  }) => {
    const bwrap = loggedBubblewrap(world);
    const first = await startWith([{ text: 'Nothing to change.' }], bwrap.env);
    const one = await runTask(first, 'first task');
    expect(one.line, bwrap.runs().join('\n')).toMatch(/ done /);
    expect(one.line).not.toContain('unsandboxed');
    expect(bwrap.probes()).toBe(1);
    const recorded = recordOf(world);
    expect(Date.now() - recorded.checkedAt).toBeLessThan(SANDBOX_RECORD_MAX_AGE_MS);

    // A server of its own (a new session): the record stands, no probe, the task is sandboxed.
    const second = await server.start({ ...world.env, ...bwrap.env });
    const two = await runTask(second, 'second task');
    expect(two.line).toMatch(/ done /);
    expect(two.line).not.toContain('unsandboxed');
    expect(jobOf(world, two.id)).toMatchObject({ sandboxed: true });
    expect(bwrap.probes()).toBe(1);
    expect(recordOf(world)).toEqual(recorded);

    // A record older than its age limit is checked again, and renewed.
    writeFileSync(
      sandboxRecordPath(world.dataHome),
      JSON.stringify({ ...recorded, checkedAt: Date.now() - SANDBOX_RECORD_MAX_AGE_MS - 1 }),
    );
    const third = await server.start({ ...world.env, ...bwrap.env });
    expect((await runTask(third, 'third task')).line).toMatch(/ done /);
    expect(bwrap.probes()).toBe(2);
    expect(recordOf(world).checkedAt).toBeGreaterThan(recorded.checkedAt);

    // Bubblewrap upgraded or reinstalled (another file): checked again.
    const wrapper = bwrap.env.DELEGATE_BWRAP_PATH_FOR_TEST!;
    utimesSync(wrapper, new Date(), new Date(Date.now() + 5_000));
    const fourth = await server.start({ ...world.env, ...bwrap.env });
    expect((await runTask(fourth, 'fourth task')).line).toMatch(/ done /);
    expect(bwrap.probes()).toBe(3);

    // Another PATH: checked again.
    const fifth = await server.start({
      ...world.env,
      ...bwrap.env,
      PATH: `${world.root}:${world.env.PATH}`,
    });
    expect((await runTask(fifth, 'fifth task')).line).toMatch(/ done /);
    expect(bwrap.probes()).toBe(4);
  });

  it('a record the sandbox no longer lives up to cannot make a command run unsandboxed', async ({
    startWith,
    server,
    world,
  }) => {
    const bwrap = loggedBubblewrap(world);
    const marker = 'ran-outside.txt';
    const first = await startWith(
      [
        { toolUses: [{ name: 'run_bash', input: { command: `echo ran > ${marker}` } }] },
        { text: 'Wrote it.' },
      ],
      bwrap.env,
    );
    const one = await runTask(first, 'write the marker');
    expect(one.line).toMatch(/ done /);
    expect(readFileSync(join(jobOf(world, one.id).worktreePath, marker), 'utf8')).toBe('ran\n');
    expect(bwrap.probes()).toBe(1);
    expect(existsSync(sandboxRecordPath(world.dataHome))).toBe(true);

    // User namespaces switched off, say: bubblewrap fails, with nothing in the key changed.
    bwrap.breakKeepingIdentity();
    const second = await server.start({ ...world.env, ...bwrap.env });
    const two = await runTask(second, 'write the marker again');
    // task_start took the record; the worker's own probe found the sandbox broken before the
    // command, failed the task, and took the record with it.
    expect(bwrap.probes()).toBe(1);
    expect(bwrap.workerProbes()).toBe(2);
    const job = jobOf(world, two.id);
    expect(job).toMatchObject({ sandboxed: true, state: 'failed' });
    expect(job.error).toContain('no longer works');
    expect(existsSync(join(job.worktreePath, marker))).toBe(false);
    expect(existsSync(sandboxRecordPath(world.dataHome))).toBe(false);

    // The next start checks afresh: under "auto" its task runs unsandboxed, and says so.
    const third = await server.start({ ...world.env, ...bwrap.env });
    const three = await runTask(third, 'write the marker a third time');
    expect(bwrap.probes()).toBe(2);
    expect(three.line).toContain('unsandboxed');
  });

  it('a worker that finds the sandbox broken removes the record', async ({ world }) => {
    writeFileSync(
      sandboxRecordPath(world.dataHome),
      JSON.stringify({ key: 'k', checkedAt: Date.now(), warnings: [] }),
    );
    await expect(
      checkJobSandbox(
        { ...world.env, DELEGATE_BWRAP_PATH_FOR_TEST: join(world.root, 'no-bwrap') },
        world.dataHome,
      ),
    ).rejects.toThrow(/no longer works/);
    expect(existsSync(sandboxRecordPath(world.dataHome))).toBe(false);
  });

  it('a failed check is not kept, and takes an earlier record with it', async ({
    startWith,
    world,
  }) => {
    writeFileSync(
      sandboxRecordPath(world.dataHome),
      JSON.stringify({ key: 'another environment', checkedAt: Date.now(), warnings: [] }),
    );
    const handle = await startWith([{ text: 'Nothing to change.' }], {
      DELEGATE_BWRAP_PATH_FOR_TEST: join(world.root, 'no-bwrap'),
    });
    const { line } = await runTask(handle, 'a task');
    expect(line).toContain('unsandboxed');
    expect(existsSync(sandboxRecordPath(world.dataHome))).toBe(false);
  });
});
