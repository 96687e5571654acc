import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSsh, startSshd, type SshdFixture } from '../helpers/sshd.ts';
import { scaledMs } from '../helpers/timing.ts';
import { waitFor } from '../helpers/wait.ts';

// The fixture the SSH runner tests stand on: a real sshd on 127.0.0.1 (installed, with the
// delegate-runner account, by scripts/install-test-deps.sh).
describe.runIf(process.platform === 'linux')('the sshd test fixture', () => {
  let sshd: SshdFixture;

  beforeAll(async () => {
    sshd = await startSshd();
  }, scaledMs(30_000));
  afterAll(async () => {
    await sshd?.stop();
  }, scaledMs(30_000));

  it('logs in as the runner user, who can write the workdir', async () => {
    const who = await sshd.exec('id -un');
    expect(who).toMatchObject({ code: 0, stdout: `${sshd.user}\n` });
    if (process.getuid?.() === 0 && sshd.separateUser) expect(sshd.user).toBe('delegate-runner');
    expect(sshd.hostKeyFingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);

    const touch = await sshd.exec(`touch '${sshd.workdir}/x'`);
    expect(touch.code, touch.stderr).toBe(0);
    expect(existsSync(join(sshd.workdir, 'x'))).toBe(true);
  });

  it('runs a separate runner user that cannot write root-owned places', async (context) => {
    if (!sshd.separateUser) context.skip();
    const denied = await sshd.exec('touch /etc/delegate-sshd-fixture-probe');
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toMatch(/Permission denied/);
    expect(existsSync('/etc/delegate-sshd-fixture-probe')).toBe(false);
  });

  it('sees a background job left on the runner', async (context) => {
    if (!sshd.separateUser) context.skip();
    const started = await sshd.exec(
      `cd ${sshd.workdir}; sleep 300 >/dev/null 2>&1 </dev/null & echo $!`,
    );
    expect(started.code, started.stderr).toBe(0);
    const pid = started.stdout.trim();
    expect(sshd.runnerProcesses()).toContainEqual(`${pid} sleep 300`);
    await sshd.exec(`kill ${pid}`);
  });

  it('refuses a host key that known_hosts does not hold', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'delegate-known-hosts-'));
    try {
      const empty = join(dir, 'known_hosts');
      writeFileSync(empty, '');
      const args = sshd.sshArgs.map((arg) =>
        arg.startsWith('UserKnownHostsFile=') ? `UserKnownHostsFile=${empty}` : arg,
      );
      const result = await runSsh([...args, 'true']);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(/Host key verification failed/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.runIf(process.platform === 'linux')('stopping the sshd test fixture', () => {
  it(
    'leaves no process of the runner user, no sshd and no files',
    async () => {
      const sshd = await startSshd();
      try {
        const started = await sshd.exec(
          `cd ${sshd.workdir}; sleep 300 >/dev/null 2>&1 </dev/null & echo $!`,
        );
        expect(started.code, started.stderr).toBe(0);
        const pid = Number(started.stdout.trim());
        if (sshd.separateUser) expect(sshd.runnerProcesses()).toContainEqual(`${pid} sleep 300`);
        await sshd.stop();
        if (sshd.separateUser) {
          expect(sshd.runnerProcesses()).toEqual([]);
          // Killed; once reaped (by whoever inherited the orphan) it is gone from /proc too.
          await waitFor(() => !existsSync(`/proc/${pid}`), 5_000);
        }
        expect(existsSync(sshd.workdir)).toBe(false);
        expect(existsSync(sshd.identityFile)).toBe(false);
        const after = await runSsh([...sshd.sshArgs, 'true'], 10_000);
        expect(after.code).not.toBe(0);
      } finally {
        await sshd.stop();
      }
    },
    scaledMs(60_000),
  );

  it(
    'kill() drops live connections but keeps the files',
    async () => {
      const sshd = await startSshd();
      try {
        const hanging = sshd.exec('sleep 60');
        await new Promise((resolve) => setTimeout(resolve, scaledMs(300)));
        await sshd.kill();
        const result = await hanging;
        expect(result.code).not.toBe(0);
        expect(existsSync(sshd.identityFile)).toBe(true);
        expect(existsSync(sshd.workdir)).toBe(true);
      } finally {
        await sshd.stop();
      }
    },
    scaledMs(60_000),
  );
});
