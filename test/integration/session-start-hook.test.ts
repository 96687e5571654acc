import { afterEach, beforeEach, describe, expect, it } from 'vitest';
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

  it('fails open on malformed input', () => {
    const run = runHook('session-start', '{oops', world.env);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toBe('');
  });
});
