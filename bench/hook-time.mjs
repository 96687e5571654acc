// Large-read hook wall time (spawn → exit, stdin as Claude Code sends it) against a bare
// `node -e 0` measured in the same run, interleaved.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { median } from './lib.mjs';

const RUNS = 25;

function timeSpawn(args, input, env, command = process.execPath) {
  const started = process.hrtime.bigint();
  const result = spawnSync(command, args, { input, env });
  if (result.status !== 0)
    throw new Error(`${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  return { ms: Number(process.hrtime.bigint() - started) / 1e6, stdout: String(result.stdout) };
}

export async function benchHookTime(root) {
  const temp = mkdtempSync(join(tmpdir(), 'delegate-bench-hook-'));
  try {
    const big = join(temp, 'big.log');
    writeFileSync(
      big,
      `${'2026-11-30T03:00:00Z INFO request served in 12 ms by worker 7 of pool main, cache hit ratio 0.93, ok\n'.repeat(2_100)}`,
    );
    writeFileSync(join(temp, 'small.txt'), 'small\n');
    const env = { PATH: process.env.PATH, HOME: temp, DELEGATE_HOME: join(temp, 'data') };
    // As hooks/hooks.json runs it: through the launcher's Node version check.
    const hook = [
      join(root, 'plugin', 'launch', 'run-node.sh'),
      'hook',
      join(root, 'plugin', 'dist', 'pre-tool-use.cjs'),
    ];
    const payload = (tool_name, tool_input) =>
      JSON.stringify({
        session_id: 's',
        cwd: temp,
        hook_event_name: 'PreToolUse',
        tool_name,
        tool_input,
        tool_use_id: 't',
      });
    const cases = [
      ['Read of a 210 KB file (denied)', payload('Read', { file_path: big }), true],
      ['Bash `git status` (passes)', payload('Bash', { command: 'git status --short' }), false],
      [
        'Bash `cat big.log | head -50` (passes, parsed)',
        payload('Bash', { command: 'cat big.log | head -50' }),
        false,
      ],
      ['Bash `cat big.log` (denied, parsed)', payload('Bash', { command: 'cat big.log' }), true],
    ];
    // The measured layer: PostToolUse through its shell fast path, which starts Node only for
    // hook inputs big enough to hold a big output.
    const post = join(root, 'plugin', 'hooks', 'post-tool-use.sh');
    const postPayload = (command, stdout) =>
      JSON.stringify({
        session_id: 's',
        cwd: temp,
        hook_event_name: 'PostToolUse',
        tool_name: 'Bash',
        tool_input: { command },
        tool_response: { stdout, stderr: '', interrupted: false, isImage: false },
        tool_use_id: 't',
      });
    const smallPost = postPayload('git status --short', ' M src/app.ts\n?? notes.txt\n');
    const bigPost = postPayload('npm test', readFileSync(big, 'utf8').slice(0, 100 * 1024));
    const postCases = [
      ['PostToolUse, small Bash output (shell fast path, passes)', smallPost, false],
      ['PostToolUse, 100 KB Bash output (digested)', bigPost, true],
    ];
    for (const [name, input, replaces] of postCases) {
      const { stdout } = timeSpawn([post], input, env, 'sh');
      if (stdout.includes('updatedToolOutput') !== replaces)
        throw new Error(`${name}: expected ${replaces ? 'a digest' : 'no output'}, got ${stdout}`);
    }
    const samples = {
      bare: [],
      both: [],
      ...Object.fromEntries([...cases, ...postCases].map(([name]) => [name, []])),
    };
    for (const [name, input, denies] of cases) {
      const { stdout } = timeSpawn(hook, input, env, 'sh');
      if (Boolean(stdout) !== denies)
        throw new Error(`${name}: expected ${denies ? 'a denial' : 'no output'}, got ${stdout}`);
    }
    for (let run = 0; run < RUNS; run += 1) {
      samples.bare.push(timeSpawn(['-e', '0'], '', env).ms);
      for (const [name, input] of cases) samples[name].push(timeSpawn(hook, input, env, 'sh').ms);
      for (const [name, input] of postCases)
        samples[name].push(timeSpawn([post], input, env, 'sh').ms);
      // One small Bash call as Claude Code runs its hooks: PreToolUse, then PostToolUse.
      samples.both.push(
        timeSpawn(hook, cases[1][1], env, 'sh').ms + timeSpawn([post], smallPost, env, 'sh').ms,
      );
    }
    const bare = median(samples.bare);
    return {
      title: 'Large-read hooks',
      note: `Wall time of \`dist/pre-tool-use.cjs\` (through \`launch/run-node.sh\`, as hooks.json runs it) and of \`hooks/post-tool-use.sh\` from spawn to exit with the hook JSON on stdin, against \`node -e 0\`; ${RUNS} interleaved runs each.`,
      rows: [
        ['bare `node -e 0` (median)', `${bare.toFixed(1)} ms`, 'baseline'],
        [
          'small Bash call, both hooks: PreToolUse + PostToolUse (median)',
          `${median(samples.both).toFixed(1)} ms = ${(median(samples.both) / bare).toFixed(2)}× bare`,
          '≤ 1.3×',
        ],
        ...[...cases, ...postCases].map(([name]) => {
          const ms = median(samples[name]);
          return [
            `${name} (median)`,
            `${ms.toFixed(1)} ms = ${(ms / bare).toFixed(2)}× bare`,
            // A digest is made only for a big output or a stopped call (which now carries the
            // file's digest): rare paths, each saving the supervisor far more than it costs.
            [...postCases, ...cases].some(([other, , isBig]) => other === name && isBig)
              ? ''
              : '≤ 1.3×',
          ];
        }),
      ],
    };
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}
