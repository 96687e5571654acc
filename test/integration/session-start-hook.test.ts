import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshStatusText } from '../../server/src/store/status-lines-file.ts';
import { runHook } from '../helpers/hook.ts';
import { createTempEnv, writeJobFixture, type TempEnv } from '../helpers/temp-env.ts';

let world: TempEnv;
beforeEach(() => {
  world = createTempEnv();
});
afterEach(() => world.cleanup());

const start = (env: Record<string, string> = {}, session?: string, source = 'startup') =>
  runHook(
    'session-start',
    JSON.stringify({
      ...(session === undefined ? {} : { session_id: session }),
      cwd: world.project,
      hook_event_name: 'SessionStart',
      source,
    }),
    { ...world.env, ...env },
  );

describe('SessionStart briefing (built bundle)', () => {
  it('says nothing when nothing is configured and no task waits', () => {
    const run = start();
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toBe('');
  });

  it('lists ready profiles with their use, and this project’s tasks awaiting an answer or a review', () => {
    world.writeConfig({
      defaultProfile: 'local',
      profiles: {
        local: {
          format: 'openai',
          baseUrl: 'http://127.0.0.1:11434/v1',
          model: 'q',
          local: true,
          use: 'private work',
        },
        fast: {
          format: 'openai',
          baseUrl: 'https://x.test/v1',
          model: 'd',
          apiKeyEnv: 'FAST_KEY',
          use: 'summaries',
        },
        cloud: {
          format: 'openai',
          baseUrl: 'https://y.test/v1',
          model: 'e',
          apiKeyEnv: 'UNSET_KEY',
          use: 'never ready',
        },
      },
    });
    writeJobFixture(world.dataHome, {
      id: 't_ask1',
      project: world.project,
      state: 'needs_input',
      question: 'Which table?',
    });
    writeJobFixture(world.dataHome, {
      id: 't_done1',
      project: world.project,
      state: 'done',
      verdict: 'passed',
    });
    writeJobFixture(world.dataHome, {
      id: 't_seen1',
      project: world.project,
      state: 'done',
      verdict: 'passed',
      reviewedAt: '2026-11-30T00:00:00Z',
    });
    writeJobFixture(world.dataHome, { id: 't_run1', project: world.project, state: 'running' });
    writeJobFixture(world.dataHome, { id: 't_other', project: '/somewhere/else', state: 'done' });
    writeJobFixture(world.dataHome, { id: 't_junk', nonsense: true });
    const run = start({ FAST_KEY: 'sk-x' });
    expect(run.exitCode).toBe(0);
    const context: string = run.json.hookSpecificOutput.additionalContext;
    expect(run.json.hookSpecificOutput.hookEventName).toBe('SessionStart');
    expect(context).toBe(
      [
        'delegate plugin: hand bulk reading and bounded work to worker models (tools mcp__plugin_delegate_workers__*).',
        'Workers ready: local (default) — private work; fast — summaries.',
        'Tasks waiting for you:',
        '- t_ask1 needs an answer: "Which table?" → task_answer',
        '- t_done1 done (passed), not reviewed → task_result t_done1',
      ].join('\n'),
    );
    expect(context).not.toContain('sk-x');
  });

  describe('per session', () => {
    const A = '3f1d9c2e-7b4a-4e21-9a0b-5c6d7e8f9a01';
    const B = '8a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d';
    const HEAD =
      'delegate plugin: hand bulk reading and bounded work to worker models (tools mcp__plugin_delegate_workers__*).';
    beforeEach(() => {
      const waiting = { project: world.project, state: 'done', verdict: 'passed' };
      writeJobFixture(world.dataHome, { id: 't_a1', ...waiting, session: A });
      writeJobFixture(world.dataHome, {
        ...waiting,
        id: 't_b1',
        state: 'needs_input',
        question: 'Port?',
        session: B,
      });
      writeJobFixture(world.dataHome, { id: 't_b2', ...waiting, session: B });
      // Started from a terminal: no session's own.
      writeJobFixture(world.dataHome, { id: 't_t1', ...waiting });
    });
    const own = (id: string) => `- ${id} done (passed), not reviewed → task_result ${id}`;
    const others = (count: string, detail: string) =>
      `Not this session's: ${count} of other sessions here (${detail}); task_status lists them if the user asks.`;

    it.each([
      [
        'session A resumed (or compacted): its own task, the others counted',
        { session: A, source: 'resume' },
        [
          HEAD,
          'Tasks waiting for you:',
          own('t_a1'),
          others('3 tasks', '1 waiting for an answer, 2 for a review'),
        ],
      ],
      [
        'session B: its question and result, the others counted',
        { session: B, source: 'compact' },
        [
          HEAD,
          'Tasks waiting for you:',
          '- t_b1 needs an answer: "Port?" → task_answer',
          own('t_b2'),
          others('2 tasks', '2 for a review'),
        ],
      ],
      [
        'a new session: nothing of its own, one count',
        { session: 'c0ffee00-0000-4000-8000-000000000000', source: 'startup' },
        [HEAD, others('4 tasks', '1 waiting for an answer, 3 for a review')],
      ],
      [
        'the id from the environment when stdin has none',
        { env: { CLAUDE_CODE_SESSION_ID: A } },
        [
          HEAD,
          'Tasks waiting for you:',
          own('t_a1'),
          others('3 tasks', '1 waiting for an answer, 2 for a review'),
        ],
      ],
      [
        'no session at all (an older Claude Code): every task, as before',
        {},
        [
          HEAD,
          'Tasks waiting for you:',
          own('t_a1'),
          '- t_b1 needs an answer: "Port?" → task_answer',
          own('t_b2'),
          own('t_t1'),
        ],
      ],
    ])(
      '%s',
      (
        _case,
        given: { session?: string; source?: string; env?: Record<string, string> },
        lines,
      ) => {
        const run = start(given.env, given.session, given.source);
        expect(run.exitCode).toBe(0);
        const context: string = run.json.hookSpecificOutput.additionalContext;
        expect(context.split('\n').sort()).toEqual([...lines].sort());
        expect(context.split('\n')[0]).toBe(HEAD);
      },
    );
  });

  describe('after /clear: the new id is linked to the one the Claude Code process started with', () => {
    const FIRST = '3f1d9c2e-7b4a-4e21-9a0b-5c6d7e8f9a01';
    const CLEARED = '0d5e6f70-8192-4a3b-9c4d-5e6f708192a3';
    let claude: ChildProcess | undefined;
    beforeEach(() => {
      // Stands in for the Claude Code process: what CLAUDE_PID names in hooks and status lines.
      claude = spawn('sleep', ['60'], { stdio: 'ignore' });
      writeJobFixture(world.dataHome, {
        id: 't_first1',
        project: world.project,
        state: 'done',
        verdict: 'passed',
        session: FIRST,
      });
    });
    afterEach(() => {
      claude?.kill('SIGKILL');
      claude = undefined;
    });
    const brief = (session: string, source: string, pid = claude!.pid!) =>
      start({ CLAUDE_PID: String(pid) }, session, source).json.hookSpecificOutput
        .additionalContext as string;
    const line = (session: string) =>
      freshStatusText(
        readFileSync(join(world.dataHome, 'status', 'lines'), 'utf8'),
        world.project,
        Date.now(),
        session,
      );

    it('the same terminal: the briefing lists its task, the status line shows it under the new id', () => {
      expect(brief(FIRST, 'startup')).toContain('- t_first1 done (passed)');
      const cleared = brief(CLEARED, 'clear');
      expect(cleared).toContain('- t_first1 done (passed), not reviewed → task_result t_first1');
      expect(cleared).not.toContain("Not this session's");
      expect(line(CLEARED)).toBe('delegate: t_first1 done passed → task_result');
    });

    it('another terminal, or one Claude Code process gone: nothing linked', () => {
      expect(brief(FIRST, 'startup')).toContain('- t_first1 done (passed)');
      const other = spawn('sleep', ['60'], { stdio: 'ignore' });
      try {
        expect(brief(CLEARED, 'startup', other.pid)).toContain("Not this session's: 1 task");
      } finally {
        other.kill('SIGKILL');
      }
      claude!.kill('SIGKILL');
      spawnSync('sleep', ['0.2']);
      expect(brief(CLEARED, 'clear')).toContain("Not this session's: 1 task");
    });
  });

  it('fails open on malformed input', () => {
    const run = runHook('session-start', '{oops', world.env);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toBe('');
  });
});
