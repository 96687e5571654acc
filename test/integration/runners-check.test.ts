/**
 * What `providers` and `delegate doctor` say about SSH runners: a real sshd on 127.0.0.1
 * (test/helpers/sshd.ts) for a runner that works, the same sshd behind an empty known_hosts for
 * one whose host key is unknown, and port 1 for one that is never asked without `check`.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { acquireSlot } from '../../server/src/calls/pool.ts';
import { slotsDir } from '../../server/src/config/paths.ts';
import type { ServerHandle } from '../helpers/mcp-server.ts';
import { runnerConfig, startSshd, type SshdFixture } from '../helpers/sshd.ts';
import { taskTest } from '../helpers/task-world.ts';
import type { TempEnv } from '../helpers/temp-env.ts';

let sshd: SshdFixture;

const goodRunner = () => runnerConfig(sshd);

/** The same sshd, its host key not trusted (and no `user`: the login's default). */
const unknownKeyRunner = (world: TempEnv) => {
  const emptyKnownHosts = join(world.root, 'known_hosts');
  writeFileSync(emptyKnownHosts, '');
  return runnerConfig(sshd, { user: undefined, knownHostsFile: emptyKnownHosts, maxTasks: 2 });
};

const it = taskTest.extend(
  'startWith',
  ({ world, provider, server }) =>
    async (runners: Record<string, unknown>): Promise<ServerHandle> => {
      const fake = await provider.start({ respond: () => ({ text: 'never' }), models: ['m'] });
      world.writeConfig({
        runners,
        profiles: { w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm', local: true } },
      });
      return server.start(world.env);
    },
);

describe.runIf(process.platform === 'linux')('SSH runners in providers and doctor', () => {
  beforeAll(async () => {
    sshd = await startSshd();
  });
  afterAll(async () => {
    await sshd?.stop();
  });

  it('providers with check: a working runner is ok, an unknown host key FAILED with its fingerprint', async ({
    startWith,
    world,
  }) => {
    const bad = unknownKeyRunner(world);
    const handle = await startWith({ build: goodRunner(), stranger: bad });
    const { text, isError } = await handle.callText('providers', { check: true });
    expect(isError, text).toBe(false);
    const lines = text.split('\n');
    const at = lines.indexOf('Runners:');
    expect(at, text).toBeGreaterThan(0);
    expect(lines[at + 1]).toBe(
      `  build — ${sshd.user}@127.0.0.1:${sshd.port}, workdir ${sshd.workdir}, maxTasks 4 (default), tasks running 0`,
    );
    expect(lines[at + 2]).toMatch(
      /^ {4}check: ok — git version \S+, shell bash, sandbox: bubblewrap ok$/,
    );
    expect(lines[at + 3]).toBe(
      `  stranger — 127.0.0.1:${sshd.port}, workdir ${sshd.workdir}, maxTasks 2, tasks running 0`,
    );
    expect(lines[at + 4]).toMatch(/^ {4}check: FAILED — Runner "stranger": the host key of /);
    expect(lines[at + 4]).toContain(sshd.hostKeyFingerprint);
    expect(lines[at + 4]).toContain(
      `ssh-keyscan -p ${sshd.port} 127.0.0.1 >> ${bad.knownHostsFile}`,
    );
    expect(lines).toHaveLength(at + 5);
  });

  it('providers without check lists the runners and their running tasks, and contacts none', async ({
    startWith,
    world,
  }) => {
    const handle = await startWith({
      build: goodRunner(),
      dead: { type: 'ssh', host: '127.0.0.1', port: 1, workdir: '/srv/delegate/' },
    });
    // A task on build holds one of its slots (this process is the live holder).
    const slot = await acquireSlot(slotsDir(world.dataHome), 'runner:build', 4);
    const started = Date.now();
    const { text } = await handle.callText('providers', {});
    await slot?.release();
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(text).toContain(
      `\nRunners:\n  build — ${sshd.user}@127.0.0.1:${sshd.port}, workdir ${sshd.workdir}, maxTasks 4 (default), tasks running 1\n` +
        `  dead — 127.0.0.1:1, workdir /srv/delegate/, maxTasks 4 (default), tasks running 0`,
    );
    expect(text).not.toContain('check:');
    expect(text).not.toContain('FAILED');
    // No ssh was run: it would have made the folder of its shared connections.
    expect(existsSync(join(world.dataHome, 'ssh'))).toBe(false);
  });

  it('doctor: FAIL for the runner with the unknown host key, ok for the working one', async ({
    world,
    provider,
    cli,
  }) => {
    const fake = await provider.start({ respond: () => ({ text: 'never' }), models: ['m'] });
    world.writeConfig({
      runners: { build: goodRunner(), stranger: unknownKeyRunner(world) },
      profiles: { w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm', local: true } },
    });
    const doctor = cli.start(['doctor']);
    const status = await doctor.exited;
    const output = doctor.lines().join('\n');
    expect(status, output + doctor.stderr()).toBe(1);
    expect(output).toMatch(/^ok {3}profiles reachable, keys in place$/m);
    expect(output).toMatch(
      new RegExp(
        `^ok {3}runner build \\(${sshd.user}@127\\.0\\.0\\.1:${sshd.port}\\): git version \\S+, shell bash, sandbox: bubblewrap ok$`,
        'm',
      ),
    );
    expect(output).toMatch(
      new RegExp(
        `^FAIL runner stranger \\(127\\.0\\.0\\.1:${sshd.port}\\) cannot take tasks$`,
        'm',
      ),
    );
    expect(output).toMatch(/^ {5}Runner "stranger": the host key of .* is not in /m);
    expect(output).toContain(sshd.hostKeyFingerprint);
    expect(output).toMatch(/\n1 check failed\.$/);
  });
});
