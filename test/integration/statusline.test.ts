import { spawnSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  realpathSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { statusLinesPath } from '../../server/src/store/status-key.ts';
import { freshStatusText } from '../../server/src/store/status-lines-file.ts';
import { CLI_BUNDLE } from '../helpers/cli-process.ts';
import { writeTask } from '../helpers/task-jobs.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';

let world: TempEnv;
let claudeDir: string;
beforeEach(() => {
  world = createTempEnv();
  claudeDir = join(world.home, '.claude');
});
afterEach(() => world.cleanup());

const settingsFile = () => join(claudeDir, 'settings.json');
const settings = () => JSON.parse(readFileSync(settingsFile(), 'utf8'));
const backups = () =>
  existsSync(claudeDir) ? readdirSync(claudeDir).filter((name) => name.includes('backup')) : [];

function cli(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [CLI_BUNDLE, ...args], {
    env: { ...world.env, ...env },
    cwd: world.project,
    encoding: 'utf8',
  });
}

/** Runs the status line command from the settings the way Claude Code does: a shell, JSON on stdin. */
function refresh(
  projectDir: string,
  command = settings().statusLine.command as string,
  session?: string,
) {
  const input = JSON.stringify({
    ...(session === undefined ? {} : { session_id: session }),
    cwd: projectDir,
    model: { id: 'claude-opus', display_name: 'Opus' },
    workspace: { current_dir: projectDir, project_dir: projectDir },
  });
  return spawnSync('bash', ['-c', command], { input, encoding: 'utf8', cwd: world.root });
}

function installed(): void {
  const result = cli(['statusline', 'install']);
  expect(result.status, result.stderr).toBe(0);
}

describe('status line reader', () => {
  it.each([
    ['plain', 'plain'],
    ['spaces', 'my project'],
    ['unicode', 'projet été ✓ 项目'],
    ['quotes and backslashes', `we"ird\\dir 'x'`],
  ])(
    'finds the line Node rendered, for a project path with %s (sh and Node agree on the path)',
    async (_label, name) => {
      const project = join(world.root, name);
      mkdirSync(project);
      await writeTask(world.dataHome, project, {
        id: 't_path01',
        state: 'running',
        step: 3,
        activity: 'reading a.ts',
      });
      await writeTask(world.dataHome, world.project, { id: 't_else01', state: 'running' });
      installed();
      const result = refresh(project);
      expect(result.status).toBe(0);
      expect(result.stdout).toBe('delegate: t_path01 · step 3/40 · reading a.ts\n');
    },
  );

  it('follows a symlinked project folder to the real path, as the task engine does', async () => {
    await writeTask(world.dataHome, world.project, { id: 't_link01', state: 'running', step: 1 });
    const link = join(world.root, 'link-to-project');
    symlinkSync(world.project, link);
    installed();
    expect(refresh(link).stdout).toBe('delegate: t_link01 · step 1/40 · running\n');
  });

  it('starts no process on Linux: it works with nothing on PATH (the clock comes from /proc)', async () => {
    await writeTask(world.dataHome, world.project, { id: 't_bare01', state: 'running', step: 1 });
    installed();
    const sh = spawnSync('sh', ['-c', 'command -v sh'], { encoding: 'utf8' }).stdout.trim();
    const result = spawnSync(sh, [join(world.dataHome, 'bin', 'delegate-statusline.sh')], {
      input: JSON.stringify({ workspace: { project_dir: world.project } }),
      env: { PATH: '/nonexistent' },
      encoding: 'utf8',
    });
    expect(result).toMatchObject({ status: 0, stderr: '' });
    expect(result.stdout).toBe('delegate: t_bare01 · step 1/40 · running\n');
  });

  it('prints only the parts still fresh, and nothing for stale, absent or garbled input', () => {
    installed();
    const now = Math.floor(Date.now() / 1000);
    const project = world.project;
    mkdirSync(join(world.dataHome, 'status'), { recursive: true });
    // No clock line (or one of another boot): the reader asks `date`.
    writeFileSync(
      statusLinesPath(world.dataHome),
      `clock 00000000-0000-0000-0000-000000000000 1\n` +
        `${now + 60} ${project}\tt_a · running\n` +
        `${now - 1} ${project}\tt_b done passed → task_result\n` +
        `not-a-number ${project}\tx\n` +
        `${now + 60} ${project}-other\tt_x · elsewhere\n` +
        `${now + 600} ${project}\tt_c asks "why?" → task_answer\n`,
    );
    expect(refresh(project).stdout).toBe(
      'delegate: t_a · running | t_c asks "why?" → task_answer\n',
    );
    // Written with no "sessions" line (an older writer): a session reads the whole line too.
    expect(refresh(project, undefined, 'c0ffee00-0000-4000-8000-000000000000').stdout).toBe(
      'delegate: t_a · running | t_c asks "why?" → task_answer\n',
    );
    writeFileSync(statusLinesPath(world.dataHome), `${now - 10} ${project}\tt_a · running\n`);
    expect(refresh(project)).toMatchObject({ status: 0, stdout: '' });
    const elsewhere = join(world.root, 'no-tasks-here');
    mkdirSync(elsewhere);
    expect(refresh(elsewhere)).toMatchObject({ status: 0, stdout: '' });
    const garbled = spawnSync('bash', ['-c', settings().statusLine.command], {
      input: '{"workspace": nope',
      encoding: 'utf8',
      cwd: world.root,
    });
    expect(garbled).toMatchObject({ status: 0, stdout: '' });
  });

  it('shows what the task engine writes: running work, a question, recent results, then fades', async () => {
    installed();
    await writeTask(world.dataHome, world.project, {
      id: 't_run001',
      state: 'running',
      profile: 'local',
      modelAnswered: 'qwen3-coder:30b',
      step: 5,
      activity: 'run_bash: npm test',
      sandboxed: false,
    });
    await writeTask(world.dataHome, world.project, {
      id: 't_ask001',
      state: 'needs_input',
      question: 'Drop the v1 endpoint?',
    });
    await writeTask(world.dataHome, world.project, {
      id: 't_end001',
      state: 'done',
      verdict: 'passed',
      review: { verdict: 'pass', notes: '', profile: 'code', turns: 1 },
      endedAt: new Date().toISOString(),
    });
    await writeTask(world.dataHome, world.project, {
      id: 't_old001',
      state: 'failed',
      endedAt: new Date(Date.now() - 11 * 60_000).toISOString(),
    });
    await writeTask(world.dataHome, world.project, {
      id: 't_rev001',
      state: 'done',
      verdict: 'passed',
      endedAt: new Date().toISOString(),
      reviewedAt: new Date().toISOString(),
    });
    expect(refresh(world.project).stdout).toBe(
      'delegate: t_ask001 asks "Drop the v1 endpoint?" → task_answer' +
        ' | t_run001 · local qwen3-coder:30b · step 5/40 · run_bash: npm test · unsandboxed' +
        ' | t_end001 done passed · review pass → task_result\n',
    );
  });
});

describe('status line reader, per session', () => {
  const A = '3f1d9c2e-7b4a-4e21-9a0b-5c6d7e8f9a01';
  const B = '8a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d';
  beforeEach(async () => {
    await writeTask(world.dataHome, world.project, {
      id: 't_sa001',
      state: 'running',
      step: 2,
      session: A,
    });
    await writeTask(world.dataHome, world.project, {
      id: 't_sb001',
      state: 'needs_input',
      question: 'Which port?',
      session: B,
    });
    await writeTask(world.dataHome, world.project, {
      id: 't_sb002',
      state: 'done',
      verdict: 'passed',
      endedAt: new Date().toISOString(),
      session: B,
    });
    // Started from a terminal: no session's own.
    await writeTask(world.dataHome, world.project, { id: 't_tm001', state: 'running', step: 1 });
    installed();
  });

  it.each([
    [
      'session A: its task, the others counted',
      A,
      'delegate: t_sa001 · step 2/40 · running | +2 other sessions',
    ],
    [
      'session B: its question and result, the others counted',
      B,
      'delegate: t_sb001 asks "Which port?" → task_answer | t_sb002 done passed → task_result | +2 other sessions',
    ],
    [
      'a session with no task yet: only the count',
      'c0ffee00-0000-4000-8000-000000000000',
      'delegate: +3 other sessions',
    ],
    [
      'no session id (an older Claude Code): every task, as before',
      undefined,
      'delegate: t_sb001 asks "Which port?" → task_answer | t_sa001 · step 2/40 · running | t_tm001 · step 1/40 · running | t_sb002 done passed → task_result',
    ],
    [
      'a session id that is no id: every task',
      'x"; rm -rf /',
      'delegate: t_sb001 asks "Which port?" → task_answer | t_sa001 · step 2/40 · running | t_tm001 · step 1/40 · running | t_sb002 done passed → task_result',
    ],
  ])('%s (sh and Node agree)', (_case, session, expected) => {
    const result = refresh(world.project, undefined, session);
    expect(result).toMatchObject({ status: 0, stderr: '' });
    expect(result.stdout).toBe(`${expected}\n`);
    const file = readFileSync(statusLinesPath(world.dataHome), 'utf8');
    expect(freshStatusText(file, world.project, Date.now(), session)).toBe(expected);
  });

  it('`delegate statusline show` run inside a session speaks for that session', () => {
    const shown = cli(['statusline', 'show'], { CLAUDE_CODE_SESSION_ID: A });
    expect(shown.stdout).toContain(
      `Now, for ${world.project}: delegate: t_sa001 · step 2/40 · running | +2 other sessions`,
    );
  });
});

describe('delegate statusline install / uninstall', () => {
  it('with no settings file: creates one; uninstall removes it again', () => {
    const result = cli(['statusline', 'install']);
    expect(result.status, result.stderr).toBe(0);
    expect(settings()).toEqual({
      statusLine: {
        type: 'command',
        command: `sh ${join(world.dataHome, 'bin', 'delegate-statusline.sh')}`,
        refreshInterval: 5,
      },
    });
    // The reader is a copy in the data home, never the plugin's (versioned) install folder.
    expect(settings().statusLine.command).not.toContain(realpathSync(join(CLI_BUNDLE, '..', '..')));
    expect(cli(['statusline', 'uninstall']).status).toBe(0);
    expect(existsSync(settingsFile())).toBe(false);
  });

  it('chains an existing status line (its output first) and restores it on uninstall', async () => {
    mkdirSync(claudeDir, { recursive: true });
    const original = {
      model: 'opus',
      permissions: { allow: ['Bash(git status)'] },
      statusLine: {
        type: 'command',
        command: `printf 'mine: %s\\n' "$(jq -r .model.display_name 2>/dev/null || echo Opus)"`,
        padding: 1,
      },
    };
    writeFileSync(settingsFile(), `${JSON.stringify(original, null, 2)}\n`);
    await writeTask(world.dataHome, world.project, { id: 't_chn001', state: 'running', step: 2 });
    const result = cli(['statusline', 'install']);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toContain('It chains your status line');
    expect(backups()).toHaveLength(1);
    const after = settings();
    expect(after.model).toBe('opus');
    expect(after.permissions).toEqual(original.permissions);
    expect(after.statusLine).toMatchObject({ type: 'command', padding: 1 });
    expect(after.statusLine.refreshInterval).toBeUndefined();
    expect(refresh(world.project).stdout).toBe(
      'mine: Opus\ndelegate: t_chn001 · step 2/40 · running\n',
    );
    // Again: nothing changes (no second chain of itself, no second backup).
    const again = cli(['statusline', 'install']);
    expect(again.stdout).toContain('already installed');
    expect(settings()).toEqual(after);
    expect(backups()).toHaveLength(1);

    expect(cli(['statusline', 'show']).stdout).toContain(
      `status line installed in ${settingsFile()}, chaining \`${original.statusLine.command}\``,
    );
    const removed = cli(['statusline', 'uninstall']);
    expect(removed.stdout).toContain('Restored your previous status line');
    expect(settings()).toEqual(original);
  });

  it('refuses a malformed settings file and leaves it untouched', () => {
    mkdirSync(claudeDir, { recursive: true });
    const broken = '{\n  "model": "opus",\n  // a comment\n}\n';
    writeFileSync(settingsFile(), broken);
    const result = cli(['statusline', 'install']);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(
      new RegExp(`^delegate: ${settingsFile()}:3:3: not valid JSON \\(.*\\)\\. Fix it`),
    );
    expect(result.stderr).toContain('nothing was changed');
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(readFileSync(settingsFile(), 'utf8')).toBe(broken);
    expect(backups()).toEqual([]);
    expect(cli(['statusline', 'uninstall']).status).toBe(1);
    expect(readFileSync(settingsFile(), 'utf8')).toBe(broken);
  });

  it('refuses a status line it cannot chain (not a command)', () => {
    mkdirSync(claudeDir, { recursive: true });
    writeFileSync(settingsFile(), JSON.stringify({ statusLine: { type: 'static', text: 'x' } }));
    const result = cli(['statusline', 'install']);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('is not a command status line');
    expect(settings()).toEqual({ statusLine: { type: 'static', text: 'x' } });
  });

  it('honours CLAUDE_CONFIG_DIR and keeps a symlinked settings.json a symlink', () => {
    const configDir = join(world.root, 'claude-config');
    const dotfiles = join(world.root, 'dotfiles');
    mkdirSync(configDir);
    mkdirSync(dotfiles);
    writeFileSync(join(dotfiles, 'settings.json'), '{"theme": "dark"}\n');
    symlinkSync(join(dotfiles, 'settings.json'), join(configDir, 'settings.json'));
    const result = cli(['statusline', 'install'], { CLAUDE_CONFIG_DIR: configDir });
    expect(result.status, result.stderr).toBe(0);
    expect(lstatSync(join(configDir, 'settings.json')).isSymbolicLink()).toBe(true);
    const written = JSON.parse(readFileSync(join(dotfiles, 'settings.json'), 'utf8'));
    expect(written).toMatchObject({ theme: 'dark', statusLine: { type: 'command' } });
    expect(existsSync(settingsFile())).toBe(false);
  });

  it('explains its usage and exits 2', () => {
    const result = cli(['statusline', 'nope']);
    expect(result.status).toBe(2);
    expect(result.stderr).toBe(
      'delegate: unknown action "nope".\nUsage: delegate statusline install|uninstall|show\n',
    );
  });
});
