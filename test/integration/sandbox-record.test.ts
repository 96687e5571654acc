import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { PROBE_AFTER_VARIABLE } from '../../server/src/sandbox/decide-sandbox.ts';
import { checkJobSandbox } from '../../server/src/sandbox/task-sandbox.ts';
import {
  SANDBOX_RECORD_MAX_AGE_MS,
  sandboxRecordPath,
} from '../../server/src/sandbox/sandbox-record.ts';
import { byAssistantTurn, type FakeReply } from '../helpers/fake-provider.ts';
import type { ServerHandle } from '../helpers/mcp-server.ts';
import { taskTest } from '../helpers/task-world.ts';
import type { TempEnv } from '../helpers/temp-env.ts';
import { pollTaskStatus, taskIdOf, waitFor } from '../helpers/wait.ts';

// A passed sandbox check is kept in the data home for the processes after it
// (server/src/sandbox/sandbox-record.ts). Each server here is a process of its own, so only the
// record can spare one the probe. Bubblewrap is a logging wrapper around the real one: its log
// says which process ran a probe.

/** The probe's command, as bubblewrap gets it (sandbox-session.ts: `true` in bash), on one line. */
const PROBE = /bash -c true'?$/;

interface LoggedBubblewrap {
  env: Record<string, string>;
  /** The probes run so far by servers (task_start), and by task workers (hosts). */
  probes(): number;
  workerProbes(): number;
  /** Every run so far: who ran it (a task id, "host" or "server") and its arguments, on a line. */
  runs(): string[];
  /** Makes it fail every run from now on, keeping its identity (path, inode, size, times). */
  breakKeepingIdentity(): void;
}

function loggedBubblewrap(world: TempEnv): LoggedBubblewrap {
  const real = execFileSync('sh', ['-c', 'command -v bwrap'], { encoding: 'utf8' }).trim();
  const wrapper = join(world.root, 'bwrap');
  const log = join(world.root, 'bwrap.log');
  const body = (last: string) =>
    // Who: the task (its id), else a task host (its parent, or the bash it runs in, is one), else the server.
    `#!/bin/sh\nwho=$\{DELEGATE_TASK_ID:-server}\nfor p in $PPID $(cut -d' ' -f4 /proc/$PPID/stat); do [ -z "$DELEGATE_TASK_ID" ] && grep -q task-worker /proc/$p/cmdline && who=host; done\nline="$who $(printf '%s' "$*" | tr '\\n' ' ')"\nprintf '%s\\n' "$line" >> '${log}'\n${last}\n`.padEnd(
      400,
      '#',
    );
  writeFileSync(wrapper, `${body(`exec '${real}' "$@"`)}\n`);
  chmodSync(wrapper, 0o755);
  // Whole seconds: a file time set again to the same value then reads back exactly.
  const time = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000);
  utimesSync(wrapper, time, time);
  const runs = () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').slice(0, -1) : []);
  return {
    // A server that takes the record probes for itself a moment later: not within these tests,
    // unless one sets it sooner.
    env: { DELEGATE_BWRAP_PATH_FOR_TEST: wrapper, [PROBE_AFTER_VARIABLE]: '600000' },
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
    expect(jobOf(world, two.id)).toMatchObject({ sandboxed: true, sandboxOnRecord: true });
    expect(bwrap.probes()).toBe(1);
    // It ran no command: its worker did not probe either.
    expect(bwrap.workerProbes()).toBe(0);
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

  it('a server that took the record probes for itself a moment later, and decides its next starts on that', async ({
    startWith,
    server,
    world,
  }) => {
    const bwrap = loggedBubblewrap(world);
    const first = await startWith([{ text: 'Nothing to change.' }], bwrap.env);
    expect((await runTask(first, 'first task')).line).toMatch(/ done /);
    expect(bwrap.probes()).toBe(1);
    const second = await server.start({
      ...world.env,
      ...bwrap.env,
      [PROBE_AFTER_VARIABLE]: '300',
    });
    const recorded = recordOf(world);
    const onRecord = await runTask(second, 'on the record');
    expect(jobOf(world, onRecord.id)).toMatchObject({ sandboxed: true, sandboxOnRecord: true });
    // Its own probe renews the record, and the server goes on it in the same step.
    await waitFor(() => recordOf(world).checkedAt > recorded.checkedAt);
    expect(bwrap.probes()).toBe(2);
    const own = await runTask(second, 'on its own probe');
    expect(own.line).toMatch(/ done /);
    const job = jobOf(world, own.id);
    expect(job.sandboxed).toBe(true);
    expect(job.sandboxOnRecord).toBeUndefined();
    expect(bwrap.probes()).toBe(2);
    expect(bwrap.workerProbes()).toBe(0);
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
    // Decided on this server's own probe: its worker does not probe again.
    expect(bwrap.workerProbes()).toBe(0);
    expect(existsSync(sandboxRecordPath(world.dataHome))).toBe(true);

    // User namespaces switched off, say: bubblewrap fails, with nothing in the key changed.
    bwrap.breakKeepingIdentity();
    const second = await server.start({ ...world.env, ...bwrap.env });
    const two = await runTask(second, 'write the marker again');
    // task_start took the record; the worker's own probe found the sandbox broken before the
    // command, failed the task, and took the record with it.
    expect(bwrap.probes()).toBe(1);
    expect(bwrap.workerProbes()).toBe(1);
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

  it('a task on record probes once, right before its first command, and runs it sandboxed', async ({
    startWith,
    server,
    world,
  }) => {
    const bwrap = loggedBubblewrap(world);
    const steps: FakeReply[] = [
      { toolUses: [{ name: 'run_bash', input: { command: 'echo one > one.txt' } }] },
      { toolUses: [{ name: 'run_bash', input: { command: 'echo two > two.txt' } }] },
      { text: 'Wrote them.' },
    ];
    const first = await startWith(steps, bwrap.env);
    expect((await runTask(first, 'write two files')).line).toMatch(/ done /);
    const second = await server.start({ ...world.env, ...bwrap.env });
    const two = await runTask(second, 'write two files again');
    expect(two.line).toMatch(/ done /);
    expect(bwrap.probes()).toBe(1);
    expect(bwrap.workerProbes()).toBe(1);
    // Past the library's look at bubblewrap's version: the probe (of the task's host: one per
    // process), then each command inside it.
    const runs = bwrap.runs().filter((line) => !line.endsWith(' --version'));
    const mine = runs.slice(runs.findIndex((line) => line.startsWith('host ')));
    expect(mine).toHaveLength(3);
    expect(PROBE.test(mine[0] ?? ''), mine.join('\n')).toBe(true);
    expect(mine.slice(1).every((line) => line.startsWith(`${two.id} `))).toBe(true);
    expect(mine.filter((line) => line.includes('echo one > one.txt'))).toHaveLength(1);
    expect(mine.filter((line) => line.includes('echo two > two.txt'))).toHaveLength(1);
    const worktree = jobOf(world, two.id).worktreePath;
    expect(readFileSync(join(worktree, 'two.txt'), 'utf8')).toBe('two\n');
  });

  it('a probe that finds the sandbox broken removes the record; starting alone, or a task being stopped, does not', async ({
    world,
  }) => {
    const record = () =>
      writeFileSync(
        sandboxRecordPath(world.dataHome),
        JSON.stringify({ key: 'k', checkedAt: Date.now(), warnings: [] }),
      );
    const broken = { ...world.env, DELEGATE_BWRAP_PATH_FOR_TEST: join(world.root, 'no-bwrap') };
    record();
    await expect(checkJobSandbox(broken, world.dataHome)).rejects.toThrow(/no longer works/);
    expect(existsSync(sandboxRecordPath(world.dataHome))).toBe(true);
    const stopped = new AbortController();
    stopped.abort(new Error('stopped'));
    await expect(
      checkJobSandbox(broken, world.dataHome, { probe: true, signal: stopped.signal }),
    ).rejects.toThrow(/no longer works/);
    expect(existsSync(sandboxRecordPath(world.dataHome))).toBe(true);
    await expect(checkJobSandbox(broken, world.dataHome, { probe: true })).rejects.toThrow(
      /no longer works/,
    );
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
