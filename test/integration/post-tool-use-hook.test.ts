import {
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KEEP_OUTPUTS } from '../../server/src/guard/output-store.ts';
import { postToolUse, preToolUse, runHook } from '../helpers/hook.ts';
import { createTempEnv, makeLog, type TempEnv } from '../helpers/temp-env.ts';

let world: TempEnv;
beforeEach(() => {
  world = createTempEnv();
});
afterEach(() => world.cleanup());

const LOG = makeLog(100 * 1024, 'ERROR payment gateway answered 502 for order 991');
const bashOutput = (stdout: string) => ({
  stdout,
  stderr: '',
  interrupted: false,
  isImage: false,
  noOutputExpected: false,
});
const post = (stdout: string, env: Record<string, string> = {}) =>
  runHook(
    'post-tool-use.sh',
    postToolUse('Bash', { command: 'npm run e2e' }, bashOutput(stdout), world.project),
    { ...world.env, ...env },
  );
const outputs = () => join(world.dataHome, 'outputs');

/** A PATH with the shell tools the entry needs and no `node`. */
function pathWithoutNode(): string {
  const bin = join(world.root, 'bin-without-node');
  mkdirSync(bin);
  for (const tool of ['sh', 'cat', 'dirname']) {
    symlinkSync(join('/usr/bin', tool === 'sh' ? 'dash' : tool), join(bin, tool));
  }
  return bin;
}

describe('PostToolUse output guard (hooks/post-tool-use.sh, stdin as Claude Code sends it)', () => {
  it('replaces a big Bash output by a digest in the Bash shape and saves the whole, private to the user', () => {
    const run = post(LOG);
    expect(run.exitCode).toBe(0);
    const replaced = run.json?.hookSpecificOutput;
    expect(replaced?.hookEventName).toBe('PostToolUse');
    const { stdout, stderr, interrupted, isImage } = replaced.updatedToolOutput;
    expect({ stderr, interrupted, isImage }).toEqual({
      stderr: '',
      interrupted: false,
      isImage: false,
    });
    expect(Buffer.byteLength(stdout)).toBeLessThanOrEqual(4 * 1024);
    expect(stdout).toContain('ERROR payment gateway answered 502 for order 991');
    const saved = /The full output is saved in (\S+);/.exec(stdout)?.[1];
    expect(dirname(saved!)).toBe(outputs());
    expect(readFileSync(saved!, 'utf8')).toBe(LOG);
    expect(statSync(saved!).mode & 0o777).toBe(0o600);
  });

  it('leaves small outputs alone without starting Node, and lets everything through without Node', () => {
    const noNode = { PATH: pathWithoutNode() };
    const small = post('ok\n', noNode);
    expect(small).toMatchObject({ exitCode: 0, stdout: '', stderr: '' });
    const big = post(LOG, noNode);
    expect(big).toMatchObject({ exitCode: 0, stdout: '' });
    expect(() => readdirSync(outputs())).toThrow();
  });

  it('fails open: a malformed big input, or a crash, leaves the output as it was', () => {
    const garbage = runHook(
      'post-tool-use.sh',
      `{"tool_name": "Bash", ${'x'.repeat(10_000)}`,
      world.env,
    );
    expect(garbage.exitCode).toBe(0);
    expect(garbage.stdout).toBe('');
    expect(garbage.stderr).toContain('output guard left the output as it was');
  });

  it('follows the off switch and the allow-list from config.json', () => {
    world.writeConfig({ largeRead: { allowCommands: ['npm run'] } });
    expect(post(LOG).stdout).toBe('');
    world.writeConfig({ largeRead: { digest: false } });
    expect(post(LOG).stdout).toBe('');
    world.writeConfig({ largeRead: { toolThresholdKb: { Bash: 200 } } });
    expect(post(LOG).stdout).toBe('');
    world.writeConfig({ largeRead: { toolThresholdKb: { Bash: 50 } } });
    expect(post(LOG).json?.hookSpecificOutput?.updatedToolOutput?.stdout).toContain('saved in');
  });

  it('keeps at most the newest outputs: older ones past the count or a week old are removed', () => {
    mkdirSync(outputs(), { recursive: true });
    const weekAgo = Date.now() / 1000 - 8 * 24 * 3600;
    for (let index = 0; index < KEEP_OUTPUTS + 5; index += 1) {
      const path = join(outputs(), `old-${String(index).padStart(3, '0')}.txt`);
      writeFileSync(path, 'old output\n');
      const seconds = index < 3 ? weekAgo : Date.now() / 1000 - 3600 + index;
      utimesSync(path, seconds, seconds);
    }
    post(LOG);
    const left = readdirSync(outputs());
    expect(left).toHaveLength(KEEP_OUTPUTS);
    expect(left).not.toContain('old-000.txt');
    expect(left.filter((name) => name.startsWith('old-'))).toHaveLength(KEEP_OUTPUTS - 1);
  });

  it('keeps a saved output reachable: a ranged Read of it passes, a whole Read of a big one is guarded', () => {
    const run = post(makeLog(300 * 1024, 'ERROR late'));
    const saved = /saved in (\S+);/.exec(run.json.hookSpecificOutput.updatedToolOutput.stdout)![1]!;
    const read = (input: Record<string, unknown>) =>
      runHook(
        'pre-tool-use',
        preToolUse('Read', { file_path: saved, ...input }, world.project),
        world.env,
      );
    expect(read({ offset: 1, limit: 200 }).stdout).toBe('');
    expect(read({}).json?.hookSpecificOutput?.permissionDecision).toBe('deny');
  });
});
