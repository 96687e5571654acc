import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  SECRET_HOME_PATHS,
  sandboxInstallHint,
  taskAllowHosts,
  taskSandboxPolicy,
} from '../../server/src/sandbox/index.ts';
import { loadConfig } from '../../server/src/profiles/load-config.ts';
import { statusLine } from '../../server/src/tasks/task-format.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';
import type { JobFile } from '../../server/src/store/job-file.ts';

let world: TempEnv;
beforeEach(() => {
  world = createTempEnv();
});
afterEach(() => world.cleanup());

const modeWith = (user: unknown, project: unknown) => {
  world.writeConfig(user === undefined ? {} : { sandbox: user });
  if (project !== undefined)
    world.writeProjectFile('.claude/delegate.json', JSON.stringify({ sandbox: project }));
  return loadConfig(world.dataHome, world.project, world.env).sandbox;
};

describe('the sandbox setting', () => {
  it('defaults to auto; a project file may tighten it but never loosen it', () => {
    expect(modeWith(undefined, undefined)).toBe('auto');
    expect(modeWith('off', undefined)).toBe('off');
    expect(modeWith(undefined, 'off')).toBe('auto');
    expect(modeWith('required', 'off')).toBe('required');
    expect(modeWith('off', 'auto')).toBe('auto');
    expect(modeWith('auto', 'required')).toBe('required');
  });

  it('names the field and the choices when the value is wrong', () => {
    world.writeConfig({ sandbox: 'on' });
    expect(() => loadConfig(world.dataHome, world.project, world.env)).toThrow(
      /- sandbox: must be "required", "auto" or "off"/,
    );
    world.writeConfig({
      profiles: {
        p: {
          format: 'openai',
          baseUrl: 'http://127.0.0.1:1/v1',
          model: 'm',
          allowHosts: ['api.example.com', 'https://x/'],
        },
      },
    });
    expect(() => loadConfig(world.dataHome, world.project, world.env)).toThrow(
      /- profiles\.p\.allowHosts\.1: must be a host such as/,
    );
  });
});

describe('task sandbox policy', () => {
  it('writes only in the task dir and TMPDIR; hides the data home and the secret folders', () => {
    const policy = taskSandboxPolicy({
      taskDir: '/w/t',
      tmpDir: '/d/jobs/t_1/tmp',
      dataHome: '/d',
      home: '/h',
      allowHosts: ['a.example.com', 'a.example.com'],
      readable: ['/d/bin-guard'],
    });
    expect(policy.writable).toEqual(['/w/t', '/d/jobs/t_1/tmp']);
    expect(policy.unreadable).toContain('/d');
    for (const path of ['.ssh', '.aws', '.gnupg', '.config/gcloud', '.azure', '.kube', '.docker'])
      expect(policy.unreadable).toContain(join('/h', path));
    expect(policy.unreadable).toHaveLength(SECRET_HOME_PATHS.length + 1);
    expect(policy.readable).toEqual(['/w/t', '/d/jobs/t_1/tmp', '/d/bin-guard']);
    expect(policy.allowHosts).toEqual(['a.example.com']);
  });

  it('accepts names, wildcards, ports and IP literals as hosts, and nothing else', () => {
    expect(
      taskAllowHosts(['api.example.com', '*.example.org:443'], ['10.0.0.5', '[::1]:8080', 'x']),
    ).toEqual(['api.example.com', '*.example.org:443', '10.0.0.5', '[::1]:8080', 'x']);
    for (const bad of ['http://a.example.com', 'a.example.com/x', '*', 'a b', ''])
      expect(() => taskAllowHosts([bad])).toThrow(/is not a host/);
  });

  it('tells what to install on each platform', () => {
    expect(sandboxInstallHint('linux')).toMatch(/bubblewrap, socat and ripgrep/);
    expect(sandboxInstallHint('darwin')).toMatch(/ripgrep/);
    expect(sandboxInstallHint('win32')).toMatch(/Linux and macOS only/);
  });
});

describe('status lines of unsandboxed tasks', () => {
  const job = (extra: Partial<JobFile>): JobFile => ({
    id: 't_abc123',
    project: '/p',
    state: 'running',
    task: 't',
    createdAt: '',
    updatedAt: '',
    lastEventAt: new Date(0).toISOString(),
    isolation: 'worktree',
    workdir: '/w',
    maxTurns: 40,
    timeoutS: 1,
    idleTimeoutS: 1,
    questionTimeoutS: 1,
    step: 1,
    costUsd: 0,
    filesTouched: [],
    ...extra,
  });

  it('end with "unsandboxed" even when the line is cut, and only for unsandboxed tasks', () => {
    const long = job({ sandboxed: false, activity: 'x'.repeat(300) });
    const line = statusLine(long, 0);
    expect(line).toHaveLength(160);
    expect(line).toMatch(/…  ?· unsandboxed$|… · unsandboxed$/);
    expect(statusLine(job({ sandboxed: true }), 0)).not.toContain('unsandboxed');
    expect(statusLine(job({}), 0)).not.toContain('unsandboxed');
  });
});
