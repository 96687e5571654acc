// What a CLI engine task is asked to try inside the OS sandbox, and how the test judges it on
// the host: a file in HOME, a file in the user's checkout, a direct TCP connection to a
// listener on 127.0.0.1 (the CLI's own model calls reach their endpoint only through the proxy).
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { expect } from 'vitest';
import { git } from './git-project.ts';
import type { ServerHandle } from './mcp-server.ts';
import { pollTaskStatus, taskIdOf } from './wait.ts';

export interface EscapeProbe {
  /** The shell command the fake model asks the CLI to run. */
  command: string;
  /** Asserts on the host that nothing escaped, and closes the listener. */
  expectConfined(): Promise<void>;
  close(): Promise<void>;
}

export async function startEscapeProbe(world: {
  home: string;
  project: string;
}): Promise<EscapeProbe> {
  let connections = 0;
  const sockets = new Set<Socket>();
  const listener: Server = createServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', () => resolve()));
  const { port } = listener.address() as AddressInfo;
  const homeFile = join(world.home, 'escape-home.txt');
  const projectFile = join(world.project, 'escape-project.txt');
  const close = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      listener.close(() => resolve());
    });
  return {
    command:
      `echo pwn > "$HOME/escape-home.txt"; echo pwn > '${projectFile}'; ` +
      `(echo probe > /dev/tcp/127.0.0.1/${port}) 2>&1; echo probed`,
    async expectConfined() {
      expect(existsSync(homeFile), 'wrote into HOME').toBe(false);
      expect(existsSync(projectFile), 'wrote into the checkout').toBe(false);
      expect(connections, 'connected to 127.0.0.1 directly').toBe(0);
      await close();
    },
    close,
  };
}

/** The CLI's tool output, as the CLI sent it back to the model: the writes were refused. */
export function expectToolOutputRefused(requestBodies: unknown[]): void {
  const sent = JSON.stringify(requestBodies);
  expect(sent.includes('probed'), 'the CLI ran the command').toBe(true);
  expect(sent.includes('Read-only file system'), 'the CLI was told its writes failed').toBe(true);
}

/** task_progress and task_status show the task sandboxed, its endpoint the only host. */
export async function expectSandboxedTask(
  handle: ServerHandle,
  id: string,
  endpointHost: string,
): Promise<void> {
  const progress = await handle.callText('task_progress', { task_id: id, limit: 200 });
  expect(progress.text).toContain(`sandbox: on · network: ${endpointHost}\n`);
  expect(progress.text).toContain('sandbox: on\n');
  expect(progress.text).toContain('(in the OS sandbox)');
  expect(progress.text).not.toContain('unsandboxed');
  const status = await handle.callText('task_status', { task_id: id });
  expect(status.text).not.toContain('unsandboxed');
}

/**
 * Starts the fix-add() task and checks it ran sandboxed: it passed, its fix is on the task
 * branch, task_progress shows the endpoint as the only host, and the probe's writes and
 * connection from inside were refused. Returns the task id.
 */
export async function expectSandboxedFix(
  handle: ServerHandle,
  world: { dataHome: string; project: string },
  fake: { url: string; requests: Array<{ body?: unknown }> },
  probe: EscapeProbe,
): Promise<string> {
  const started = await handle.callText('task_start', {
    task: 'Fix add() so node test.js passes',
    test_command: 'node test.js',
  });
  expect(started.isError, started.text).toBe(false);
  const id = taskIdOf(started.text);
  const done = await pollTaskStatus(handle, id, /done|failed|lost|timeout/, 90_000);
  const events = readFileSync(join(world.dataHome, 'jobs', id, 'events.jsonl'), 'utf8');
  expect(done, events).toMatch(new RegExp(`^${id} done passed`));
  // task_result waits for the work to be committed to the task's branch.
  const result = await handle.callText('task_result', { task_id: id, include_patch: true });
  expect(result.text).toContain('+exports.add = (a, b) => a + b;');
  expect(result.text).not.toContain('unsandboxed');
  await expectSandboxedTask(handle, id, new URL(fake.url).host);
  expectToolOutputRefused(fake.requests.map((request) => request.body));
  await probe.expectConfined();
  expect(git(world.project, 'show', `delegate/${id}:src/add.js`)).toContain('a + b');
  return id;
}
