// What a CLI engine task is asked to try inside the OS sandbox, and how the test judges it on
// the host: a file in HOME, a file in the user's checkout, a direct TCP connection to a
// listener on 127.0.0.1 (the CLI's own model calls reach their endpoint only through the proxy).
import { existsSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { ServerHandle } from './mcp-server.ts';

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
