import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { preToolUse, runHook } from '../helpers/hook.ts';
import { createTempEnv, makeLog, type TempEnv } from '../helpers/temp-env.ts';

let world: TempEnv;
let big: string;
beforeEach(() => {
  world = createTempEnv();
  big = world.writeProjectFile('logs/big.log', makeLog(200 * 1024));
  world.writeProjectFile('small.txt', 'hello\n');
});
afterEach(() => world.cleanup());

const hook = (tool: string, input: Record<string, unknown>, env: Record<string, string> = {}) =>
  runHook('pre-tool-use', preToolUse(tool, input, world.project), { ...world.env, ...env });

function expectDecision(run: ReturnType<typeof runHook>, decision: 'deny' | 'ask'): string {
  expect(run.exitCode).toBe(0);
  expect(run.json?.hookSpecificOutput).toMatchObject({
    hookEventName: 'PreToolUse',
    permissionDecision: decision,
  });
  return run.json.hookSpecificOutput.permissionDecisionReason as string;
}

function expectPass(run: ReturnType<typeof runHook>): void {
  expect(run.exitCode).toBe(0);
  expect(run.stdout).toBe('');
}

describe('PreToolUse large-read guard (built bundle, stdin as Claude Code sends it)', () => {
  it('denies a whole Read of a big file, naming the delegate call with the absolute path and the size', () => {
    const reason = expectDecision(hook('Read', { file_path: big }), 'deny');
    expect(reason).toContain('mcp__plugin_delegate_workers__delegate');
    expect(reason).toContain(`"files": [${JSON.stringify(big)}]`);
    expect(reason).toContain('200.0 KB');
    expect(reason).toContain('offset/limit');
  });

  it('lets a bounded Read, a small file and a missing file through', () => {
    expectPass(hook('Read', { file_path: big, offset: 1, limit: 50 }));
    expectPass(hook('Read', { file_path: join(world.project, 'small.txt') }));
    expectPass(hook('Read', { file_path: join(world.project, 'nope.log') }));
  });

  it('denies `cat` of a big file and lets a bounded pipeline through', () => {
    const reason = expectDecision(hook('Bash', { command: 'cat logs/big.log' }), 'deny');
    expect(reason).toContain(`"files": [${JSON.stringify(big)}]`);
    expectPass(hook('Bash', { command: 'cat logs/big.log | head -50' }));
    expectPass(hook('Bash', { command: 'cat small.txt' }));
  });

  it('lets every Grep through: what a search returns is measured after the call', () => {
    expectPass(hook('Grep', { pattern: 'ERROR', path: big, output_mode: 'content' }));
  });

  it('asks instead in ask mode, set in config.json', () => {
    world.writeConfig({ largeRead: { mode: 'ask' } });
    expectDecision(hook('Read', { file_path: big }), 'ask');
  });

  it('follows the project threshold, and the environment override beats both', () => {
    mkdirSync(join(world.project, '.claude'));
    writeFileSync(
      join(world.project, '.claude', 'delegate.json'),
      JSON.stringify({ largeRead: { thresholdKb: 500 } }),
    );
    expectPass(hook('Read', { file_path: big }));
    expectDecision(hook('Read', { file_path: big }, { DELEGATE_LARGE_READ_KB: '100' }), 'deny');
    expectPass(
      hook(
        'Read',
        { file_path: big },
        { DELEGATE_LARGE_READ: 'off', DELEGATE_LARGE_READ_KB: '100' },
      ),
    );
  });

  it('fails open: malformed input, empty input and a crash let the call through with exit 0', () => {
    for (const stdin of ['{not json', '', 'null', '[]']) {
      const run = runHook('pre-tool-use', stdin, world.env);
      expectPass(run);
    }
    const crashed = runHook('pre-tool-use', preToolUse('Read', { file_path: big }, world.project), {
      ...world.env,
      DELEGATE_HOOK_CRASH_FOR_TEST: '1',
    });
    expectPass(crashed);
    expect(crashed.stderr).toContain('large-read guard let the call through after an error');
  });

  it('ignores a broken config file (the server reports it) and keeps guarding with defaults', () => {
    writeFileSync(join(world.dataHome, 'config.json'), '{ broken');
    expectDecision(hook('Read', { file_path: big }), 'deny');
  });
});
