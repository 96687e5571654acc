import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isProcessAlive, parseProcessStat } from '../../server/src/util/process-identity.ts';
import { scaledMs } from '../helpers/timing.ts';

let dir: string;
const children: ChildProcess[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'delegate-identity-'));
});
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const readStat = (pid: number) => {
  try {
    return parseProcessStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
};

async function until(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + scaledMs(timeoutMs);
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(10);
  }
}

describe.skipIf(process.platform !== 'linux')('isProcessAlive on Linux', () => {
  it('counts a zombie as dead although kill(pid, 0) still reaches it', async () => {
    // The grandchild's parent becomes `sleep` (exec), which never reaps it once killed.
    const parent = spawn('sh', ['-c', 'sleep 30 & echo $!; exec sleep 30'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    children.push(parent);
    const [line] = (await once(createInterface({ input: parent.stdout }), 'line')) as [string];
    const pid = Number(line);
    const startTime = readStat(pid)?.startTime ?? '';
    expect(isProcessAlive({ pid, startTime })).toBe(true);

    process.kill(pid, 'SIGKILL');
    await until(() => readStat(pid)?.state === 'Z');
    expect(() => process.kill(pid, 0)).not.toThrow();
    expect(isProcessAlive({ pid, startTime })).toBe(false);
  });

  it('checks a process whose name looks like stat fields', async () => {
    // Split at the first ')' this name reads as state Z, and field 22 shifts by three.
    const name = 'a) Z 1 (b';
    const executable = join(dir, name);
    copyFileSync('/bin/sleep', executable);
    chmodSync(executable, 0o755);
    const child = spawn(executable, ['30'], { stdio: 'ignore' });
    children.push(child);
    await new Promise((resolve) => child.once('spawn', resolve));
    const pid = child.pid ?? 0;
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(`${pid} (${name}) `.length).split(' ');
    const startTime = fields[19] ?? '';
    expect(text.startsWith(`${pid} (${name}) `)).toBe(true);
    expect(parseProcessStat(text)).toEqual({ state: fields[0], startTime });
    expect(isProcessAlive({ pid, startTime })).toBe(true);
    expect(isProcessAlive({ pid, startTime: `${startTime}0` })).toBe(false);
  });
});
