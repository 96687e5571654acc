import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runHook } from '../helpers/hook.ts';
import { createTempEnv, writeJobFixture, type TempEnv } from '../helpers/temp-env.ts';

let world: TempEnv;
beforeEach(() => {
  world = createTempEnv();
});
afterEach(() => world.cleanup());

const start = (env: Record<string, string> = {}) =>
  runHook(
    'session-start',
    JSON.stringify({
      session_id: 's',
      cwd: world.project,
      hook_event_name: 'SessionStart',
      source: 'startup',
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

  it('fails open on malformed input', () => {
    const run = runHook('session-start', '{oops', world.env);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toBe('');
  });
});
