import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_LIMITS,
  checkSandbox,
  taskSandboxPolicy,
  type SandboxCheck,
} from '../../server/src/sandbox/index.ts';
import {
  FILE_AND_SHELL_TOOLS,
  type WorkerToolContext,
} from '../../server/src/agent/worker-tools/index.ts';
import { killProcessGroup } from '../../server/src/sandbox/kill-process-group.ts';
import { workerEnv } from '../../server/src/sandbox/worker-env.ts';
import { isBrokenRunner, runTestCommand } from '../../server/src/tasks/verify.ts';
import { liveProcesses } from '../helpers/processes.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';
import { waitFor } from '../helpers/wait.ts';
import { scaledMs } from '../helpers/timing.ts';

const runBash = FILE_AND_SHELL_TOOLS.find((tool) => tool.name === 'run_bash');
/**
 * bubblewrap's outer process exits as soon as the command's status is known; its PID namespace
 * (and everything the command left running in it) is torn down a moment later.
 */
const SETTLE_MS = 2_000;
let check: SandboxCheck;
let world: TempEnv;
let taskDir: string;
let tmpDir: string;
let context: WorkerToolContext;
let groups: number[];
let servers: Server[];

beforeAll(async () => {
  check = await checkSandbox(process.env);
});
beforeEach(() => {
  world = createTempEnv();
  taskDir = join(world.dataHome, 'worktrees', 'project', 't_sbx001');
  tmpDir = join(world.dataHome, 'jobs', 't_sbx001', 'tmp');
  mkdirSync(taskDir, { recursive: true });
  groups = [];
  servers = [];
  context = {
    root: taskDir,
    env: workerEnv({ ...process.env, HOME: world.home }, { TMPDIR: tmpDir }),
    sandbox: taskSandboxPolicy({ taskDir, tmpDir, dataHome: world.dataHome, home: world.home }),
    onChildProcess: (pgid) => groups.push(pgid),
  };
});
afterEach(async () => {
  await Promise.all(groups.map((pgid) => killProcessGroup(pgid, 100)));
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  world.cleanup();
});

const run = async (command: string, timeoutS?: number) => {
  if (!runBash) throw new Error('run_bash is missing');
  const started = Date.now();
  const result = await runBash.run({ command, timeout_s: timeoutS }, context);
  return { ...result, elapsedMs: Date.now() - started };
};

async function listener(): Promise<{ port: number; hits: string[] }> {
  const hits: string[] = [];
  const server = createServer((request, response) => {
    hits.push(request.url ?? '');
    response.end('reached');
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, hits };
}

describe.runIf(process.platform === 'linux')('run_bash in the OS sandbox', () => {
  it('is available on this machine (scripts/install-test-deps.sh installs what it needs)', () => {
    expect(check, JSON.stringify(check)).toMatchObject({ isAvailable: true, warnings: [] });
  });

  it('writes in the task dir and its TMPDIR, and nowhere else', async () => {
    const result = await run(
      `echo in > inside.txt && echo tmp > "$TMPDIR/t.txt" && echo "tmp=$TMPDIR"; echo out > ${world.root}/outside.txt; echo "exit $?"`,
    );
    expect(result.content).toContain(`tmp=${tmpDir}`);
    expect(result.content).toMatch(/outside\.txt: Read-only file system/);
    expect(result.content).toMatch(/exit 1\nexit code 0$/);
    expect(existsSync(join(taskDir, 'inside.txt'))).toBe(true);
    expect(existsSync(join(tmpDir, 't.txt'))).toBe(true);
    expect(existsSync(join(world.root, 'outside.txt'))).toBe(false);
  });

  it('runs the command as written: quoting, expansions and exit codes survive the wrapping', async () => {
    const result = await run(`printf '%s|' "a'b" 'c"d' "$((1+2))" '$HOME' \\\\; exit 3`);
    expect(result.content).toBe(`a'b|c"d|3|$HOME|\\|\nexit code 3`);
    const broken = await run('echo (');
    expect(broken.content).toMatch(/syntax error/);
    expect(broken.content).toMatch(/exit code 2$/);
  });

  it('on timeout kills everything the command started inside the sandbox', async () => {
    const result = await run('sleep 731.5 & sleep 732.5 & wait', 1);
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/^Timed out after 1 s/);
    expect(result.elapsedMs).toBeLessThan(scaledMs(8_000));
    await waitFor(
      () => liveProcesses(({ commandLine }) => /sleep 73[12]\.5/.test(commandLine)).length === 0,
      SETTLE_MS,
    );
  });

  it('ends background processes when the command ends, and leaves no mount points behind', async () => {
    const result = await run('sleep 733.5 & echo started', 20);
    expect(result.content).toMatch(/^started\n/);
    expect(result.elapsedMs).toBeLessThan(scaledMs(8_000));
    await waitFor(
      () => liveProcesses(({ commandLine }) => commandLine.includes('sleep 733.5')).length === 0,
      SETTLE_MS,
    );
    expect(readdirSync(taskDir)).toEqual([]);
  });

  it('caps the processes of a command: a bounded fork bomb is held at the limit and ends by itself', async () => {
    // A tree of 255 shells and 128 five-second sleeps, each of its processes named by the
    // nonce; sh (dash) gives up on a failed fork at once (and says "Cannot fork") where bash
    // would retry for half a minute. The failed forks are counted from the bomb's own stderr,
    // so whether the cap bit does not depend on a sampler seeing a short-lived peak.
    const bomb = (nonce: string) =>
      `sh -c 'b() { if [ $1 -gt 0 ]; then b $(($1-1)) & b $(($1-1)) & wait; else sleep 5.${nonce}; fi; }; b 7' 2>"$TMPDIR/bomb.err"; ` +
      `ulimit -u; echo "fork failures: $(grep -c 'Cannot fork' "$TMPDIR/bomb.err")"`;
    const peakOf = async (nonce: string, processes: number) => {
      context.sandbox = { ...context.sandbox!, limits: { processes, memoryMb: 8192 } };
      let peak = 0;
      const sampler = setInterval(() => {
        const count = liveProcesses(({ commandLine }) => commandLine.includes(nonce)).length;
        peak = Math.max(peak, count);
      }, 20);
      try {
        const result = await run(bomb(nonce), 120);
        const failures = Number(/fork failures: (\d+)/.exec(result.content)?.[1]);
        return { peak, result, failures };
      } finally {
        clearInterval(sampler);
      }
    };
    const capped = await peakOf('7001', 48);
    expect(capped.result.content).toMatch(/^48\nfork failures: \d+\n/);
    expect(capped.failures).toBeGreaterThan(0);
    expect(capped.peak).toBeGreaterThan(0);
    expect(capped.peak).toBeLessThanOrEqual(48);
    // The control: the same tree under the default limit forks every process and grows past it.
    const free = await peakOf('7002', DEFAULT_LIMITS.processes);
    expect(free.result.content).toMatch(
      new RegExp(`^${DEFAULT_LIMITS.processes}\\nfork failures: 0\\n`),
    );
    expect(free.peak).toBeGreaterThan(48);
  }, 150_000);

  it('caps the memory of each process', async () => {
    // Node 24 reserves up to 1 GB of data segment just to start (its code range), so the cap is
    // above that. The limit bites when the memory is mapped: 1.5 GB is asked for, never touched.
    const allocate = `node -e "Buffer.alloc(1536 * 1024 * 1024); console.log('allocated')"`;
    context.sandbox = { ...context.sandbox!, limits: { processes: 1024, memoryMb: 1024 } };
    const capped = await run(allocate, 60);
    expect(capped.content).toContain('Array buffer allocation failed');
    context.sandbox = { ...context.sandbox, limits: { processes: 1024, memoryMb: 4096 } };
    expect((await run(allocate, 60)).content).toMatch(/^allocated\n/);
  });

  it('has no network, except to allowed hosts through the sandbox proxy', async () => {
    const allowed = await listener();
    const other = await listener();
    context = {
      ...context,
      sandbox: taskSandboxPolicy({
        taskDir,
        tmpDir,
        dataHome: world.dataHome,
        home: world.home,
        allowHosts: [`127.0.0.1:${allowed.port}`],
      }),
    };
    // Loopback is in the NO_PROXY the sandbox sets, so curl is told to use the proxy anyway.
    const result = await run(
      `curl -sS --max-time 5 --noproxy '' http://127.0.0.1:${allowed.port}/via-proxy; echo; ` +
        `curl -sS --max-time 5 --noproxy '' http://127.0.0.1:${other.port}/other; echo; ` +
        `curl -sS --max-time 5 http://127.0.0.1:${other.port}/direct; echo " curl=$?"`,
    );
    expect(result.content).toContain('reached');
    expect(result.content).toContain('Connection blocked by network allowlist');
    expect(result.content).toMatch(/curl=7/);
    expect(allowed.hits).toEqual(['/via-proxy']);
    expect(other.hits).toEqual([]);
  });

  it('runs the test command in the same sandbox, and an unusable sandbox as a broken runner', async () => {
    writeFileSync(join(taskDir, 'test.sh'), `echo ok > result.txt; echo x > ${world.root}/leak\n`);
    const facts = await runTestCommand(
      'bash test.sh',
      taskDir,
      context.env,
      30_000,
      context.sandbox,
    );
    expect(facts.exitCode).toBe(1);
    expect(facts.outputTail).toMatch(/leak: Read-only file system/);
    expect(existsSync(join(taskDir, 'result.txt'))).toBe(true);
    expect(existsSync(join(world.root, 'leak'))).toBe(false);
    const refused = await runTestCommand('true', taskDir, context.env, 30_000, {
      ...taskSandboxPolicy({ taskDir, tmpDir, dataHome: world.dataHome, home: world.home }),
      allowHosts: ['not a host'],
    });
    expect(isBrokenRunner(refused)).toBe(true);
    expect(refused.outputTail).toMatch(/could not set up the OS sandbox/);
  });
});
