import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sshArguments, type RunnerAddress } from '../../server/src/runners/ssh.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';

let world: TempEnv;
beforeEach(() => {
  world = createTempEnv();
});
afterEach(() => world.cleanup());

const runner: RunnerAddress = {
  name: 'build',
  host: 'build-1.lan',
  port: 2222,
  user: 'ci',
  identityFile: '~/.ssh/id_ed25519',
  knownHostsFile: '~/.ssh/known_hosts_build',
  workdir: '/srv/delegate',
};

const option = (args: string[], name: string) =>
  args
    .find((arg, index) => args[index - 1] === '-o' && arg.startsWith(`${name}=`))
    ?.slice(name.length + 1);

describe('the ssh command line of a runner', () => {
  it('reads no ssh config, checks host keys strictly, never prompts and forwards nothing', () => {
    const args = sshArguments(runner, world.dataHome, { HOME: '/home/me' });
    expect(args.slice(0, 2)).toEqual(['-F', 'none']);
    expect(option(args, 'StrictHostKeyChecking')).toBe('yes');
    expect(option(args, 'BatchMode')).toBe('yes');
    expect(option(args, 'ForwardAgent')).toBe('no');
    expect(option(args, 'ForwardX11')).toBe('no');
    expect(option(args, 'ClearAllForwardings')).toBe('yes');
    expect(option(args, 'PermitLocalCommand')).toBe('no');
    expect(option(args, 'UserKnownHostsFile')).toBe('/home/me/.ssh/known_hosts_build');
    expect(option(args, 'GlobalKnownHostsFile')).toBe('/dev/null');
    expect(args).toContain('/home/me/.ssh/id_ed25519');
    // The host comes last, after `--`: nothing in it is read as an option.
    expect(args.slice(-2)).toEqual(['--', 'build-1.lan']);
  });

  it('shares a connection only between runners that trust and log in alike', () => {
    const path = (changes: Partial<RunnerAddress>) =>
      option(
        sshArguments({ ...runner, ...changes }, world.dataHome, { HOME: '/home/me' }),
        'ControlPath',
      );
    const same = path({});
    expect(path({ name: 'another-name' })).toBe(same);
    expect(path({ workdir: '/elsewhere' })).toBe(same);
    for (const change of [
      { knownHostsFile: '/tmp/other' },
      { identityFile: '/tmp/other-key' },
      { user: 'root' },
      { port: 22 },
      { host: 'build-2.lan' },
    ]) {
      expect(path(change), JSON.stringify(change)).not.toBe(same);
    }
  });
});
