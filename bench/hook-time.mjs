// Large-read hook wall time against a bare `node -e 0` measured in the same run, interleaved,
// on both paths hooks/hooks.json declares (docs/hooks.md): the server's hook_answer tool (an
// mcp_tool hook: one JSON-RPC round trip to the running server) beside hooks/fallback.sh, which
// ends at once while the server runs; and the command path that starts Node (server not running).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { median } from './lib.mjs';

const RUNS = 25;

function timeSpawn(command, args, input, env) {
  const started = performance.now();
  const result = spawnSync(command, args, { input, env });
  if (result.status !== 0)
    throw new Error(`${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  return { ms: performance.now() - started, stdout: String(result.stdout) };
}

/** The bench's calls: name, event, tool, tool_input, tool_response, whether the guard acts. */
function calls(temp, big) {
  const bash = (stdout) => ({ stdout, stderr: '', interrupted: false, isImage: false });
  return {
    smallPre: [
      'Bash `git status` (passes)',
      'PreToolUse',
      'Bash',
      { command: 'git status --short' },
      undefined,
      false,
    ],
    smallPost: [
      'PostToolUse, small Bash output (passes)',
      'PostToolUse',
      'Bash',
      { command: 'git status --short' },
      bash(' M src/app.ts\n?? notes.txt\n'),
      false,
    ],
    others: [
      ['Read of a 210 KB file (denied)', 'PreToolUse', 'Read', { file_path: big }, undefined, true],
      [
        'Bash `cat big.log | head -50` (passes, parsed)',
        'PreToolUse',
        'Bash',
        { command: 'cat big.log | head -50' },
        undefined,
        false,
      ],
      [
        'Bash `cat big.log` (denied, parsed)',
        'PreToolUse',
        'Bash',
        { command: 'cat big.log' },
        undefined,
        true,
      ],
      [
        'PostToolUse, 100 KB Bash output (digested)',
        'PostToolUse',
        'Bash',
        { command: 'npm test' },
        bash(readFileSync(big, 'utf8').slice(0, 100 * 1024)),
        true,
      ],
    ],
    stdin: (call) =>
      JSON.stringify({
        session_id: 's',
        cwd: temp,
        hook_event_name: call[1],
        tool_name: call[2],
        tool_input: call[3],
        ...(call[4] ? { tool_response: call[4] } : {}),
        tool_use_id: 't',
      }),
    // What hooks.json's mcp_tool hook sends: Claude Code interpolates objects as JSON text.
    toolArguments: (call) => ({
      event: call[1],
      tool_name: call[2],
      tool_input: JSON.stringify(call[3]),
      cwd: temp,
      ...(call[4] ? { tool_response: JSON.stringify(call[4]) } : {}),
    }),
  };
}

export async function benchHookTime(root) {
  const temp = mkdtempSync(join(tmpdir(), 'delegate-bench-hook-'));
  let client;
  try {
    const big = join(temp, 'big.log');
    writeFileSync(
      big,
      `${'2026-11-30T03:00:00Z INFO request served in 12 ms by worker 7 of pool main, cache hit ratio 0.93, ok\n'.repeat(2_100)}`,
    );
    // The server marks itself in its data home; the command path runs where no server did.
    const servedEnv = { PATH: process.env.PATH, HOME: temp, DELEGATE_HOME: join(temp, 'served') };
    const commandEnv = { ...servedEnv, DELEGATE_HOME: join(temp, 'data') };
    mkdirSync(commandEnv.DELEGATE_HOME);
    const fallback = join(root, 'plugin', 'hooks', 'fallback.sh');
    // As hooks/hooks.json runs them: through fallback.sh and the launcher's Node version check.
    const commandOf = {
      PreToolUse: [
        fallback,
        'sh',
        join(root, 'plugin', 'launch', 'run-node.sh'),
        'hook',
        join(root, 'plugin', 'dist', 'pre-tool-use.cjs'),
      ],
      PostToolUse: [fallback, 'sh', join(root, 'plugin', 'hooks', 'post-tool-use.sh')],
    };
    const set = calls(temp, big);
    const all = [set.smallPre, set.smallPost, ...set.others];
    const runCommand = (call, env) => timeSpawn('sh', commandOf[call[1]], set.stdin(call), env);
    client = new Client({ name: 'bench', version: '1' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [join(root, 'plugin', 'dist', 'server.mjs')],
        env: servedEnv,
        cwd: temp,
        stderr: 'ignore',
      }),
    );
    const answer = async (call) => {
      const started = performance.now();
      const result = await client.callTool({
        name: 'hook_answer',
        arguments: set.toolArguments(call),
      });
      return { ms: performance.now() - started, stdout: result.content[0]?.text ?? '' };
    };
    // Same answers on both paths (saved-output names aside), and the fallback silent while served.
    const same = (text) => text.replace(/\/(?:data|served)\/outputs\/[\w.-]+\.txt/g, '<saved>');
    for (const call of all) {
      const command = runCommand(call, commandEnv).stdout;
      const served = (await answer(call)).stdout;
      if (Boolean(command) !== call[5] || same(command) !== same(served))
        throw new Error(`${call[0]}: the paths answer differently:\n${command}\n${served}`);
      if (runCommand(call, servedEnv).stdout !== '')
        throw new Error(`${call[0]}: fallback.sh answered while the server runs`);
    }
    const samples = { bare: [], served: [], command: [], check: [] };
    for (const call of all) samples[call[0]] = { served: [], command: [] };
    for (let run = 0; run < RUNS; run += 1) {
      samples.bare.push(timeSpawn(process.execPath, ['-e', '0'], '', commandEnv).ms);
      const event = {};
      for (const call of all) {
        const command = runCommand(call, commandEnv).ms;
        const served = (await answer(call)).ms;
        const check = runCommand(call, servedEnv).ms;
        samples[call[0]].command.push(command);
        samples[call[0]].served.push(served);
        event[call[0]] = { command, served: Math.max(served, check) };
        if (call === set.smallPre || call === set.smallPost) samples.check.push(check);
      }
      // One small Bash call as Claude Code runs its hooks: PreToolUse, then PostToolUse; within
      // an event the mcp_tool hook and fallback.sh run side by side, so the slower one counts.
      samples.served.push(event[set.smallPre[0]].served + event[set.smallPost[0]].served);
      samples.command.push(event[set.smallPre[0]].command + event[set.smallPost[0]].command);
    }
    const bare = median(samples.bare);
    const figure = (values) => {
      const ms = median(values);
      return `${ms.toFixed(1)} ms = ${(ms / bare).toFixed(2)}× bare`;
    };
    return {
      title: 'Large-read hooks',
      note:
        `Both paths of the guard (docs/hooks.md), ${RUNS} interleaved runs each, against \`node -e 0\` in the same run. ` +
        'Server running: `hook_answer` called over stdio on a running `dist/server.mjs` (the round trip of the mcp_tool hook, measured at an MCP SDK client), ' +
        'beside `hooks/fallback.sh` spawned with the server mark present (it ends at once); Claude Code runs the two side by side, so per event the slower counts. ' +
        'Command path (server not running): `hooks/fallback.sh` → `launch/run-node.sh` → `dist/pre-tool-use.cjs`, or → `hooks/post-tool-use.sh`, spawn to exit with the hook JSON on stdin. ' +
        'A shared 2-core machine: medians move between runs; the ratios are to the floor of the same run.',
      rows: [
        ['bare `node -e 0` (median)', `${bare.toFixed(1)} ms`, 'baseline'],
        [
          'small Bash call, both hooks, server running: PreToolUse + PostToolUse (median)',
          figure(samples.served),
          // Outside Claude Code: its own cost of running the hooks is in "Hooks inside Claude Code".
          'see Hooks inside Claude Code',
        ],
        [
          'small Bash call, both hooks, command path (server not running) (median)',
          figure(samples.command),
          '≤ 1.3×',
        ],
        [
          '`hooks/fallback.sh` while the server runs (ends at once) (median)',
          figure(samples.check),
          '',
        ],
        ...all.map((call) => [
          `in-process \`hook_answer\`: ${call[0]} (median)`,
          figure(samples[call[0]].served),
          '',
        ]),
        ...all.map((call) => [
          `command path: ${call[0]} (median)`,
          figure(samples[call[0]].command),
          // A digest is made only for a big output or a stopped call: rare paths, each saving
          // the supervisor far more than it costs.
          call[5] ? '' : '≤ 1.3×',
        ]),
      ],
    };
  } finally {
    await client?.close();
    rmSync(temp, { recursive: true, force: true });
  }
}
