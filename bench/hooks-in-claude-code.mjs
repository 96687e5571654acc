// What the hooks add to a small Bash call inside the real, pinned Claude Code (offline: a fake
// Messages API on 127.0.0.1), per way of answering them: stream-json's tool_use → tool_result
// time of `true`, against the same session with no hooks, and with one bare `node -e 0` command
// hook as the floor of the command path. Modes take turns, so load on a shared machine falls on
// all of them.
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadTestHelper, median } from './lib.mjs';

const CALLS = 25;
const ROUNDS = 5;

/** Each mode's PreToolUse and PostToolUse hooks on Bash (`root` is the plugin's folder). */
function modes(root, httpUrl) {
  const hook = (event, extra = {}) => ({
    type: 'mcp_tool',
    server: 'plugin:delegate:workers',
    tool: 'hook_answer',
    input: {
      event,
      tool_name: '${tool_name}',
      tool_input: '${tool_input}',
      cwd: '${cwd}',
      ...extra,
    },
    timeout: 5,
    onFailure: 'continue',
  });
  const preCommand = [
    'sh',
    join(root, 'plugin', 'launch', 'run-node.sh'),
    'hook',
    join(root, 'plugin', 'dist', 'pre-tool-use.cjs'),
  ];
  const postCommand = ['sh', join(root, 'plugin', 'hooks', 'post-tool-use.sh')];
  const command = ([program, ...args]) => ({
    type: 'command',
    command: program,
    args,
    timeout: 10,
  });
  const fallback = (argv) => command(['sh', join(root, 'plugin', 'hooks', 'fallback.sh'), ...argv]);
  const postHook = hook('PostToolUse', { tool_response: '${tool_response}' });
  return {
    'no hooks': [[], []],
    'floor: one `node -e 0` command hook': [[command([process.execPath, '-e', '0'])], []],
    'command hooks (before this change)': [[command(preCommand)], [command(postCommand)]],
    'shipped: mcp_tool hook + `fallback.sh` command hook, server running': [
      [hook('PreToolUse'), fallback(preCommand)],
      [postHook, fallback(postCommand)],
    ],
    'mcp_tool hooks, `fallback.sh` on PostToolUse only': [
      [hook('PreToolUse')],
      [postHook, fallback(postCommand)],
    ],
    'mcp_tool hooks alone (no command fallback)': [[hook('PreToolUse')], [postHook]],
    'http hooks to a local server answering `{}`': [
      [{ type: 'http', url: httpUrl, timeout: 5 }],
      [{ type: 'http', url: httpUrl, timeout: 5 }],
    ],
  };
}

/** A copy of the plugin's manifest and server declaration, with `hooks` as its only hooks. */
function pluginWith(root, dir, hooks) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'hooks'), { recursive: true });
  cpSync(join(root, 'plugin', '.claude-plugin'), join(dir, '.claude-plugin'), { recursive: true });
  writeFileSync(
    join(dir, '.mcp.json'),
    JSON.stringify({
      mcpServers: {
        workers: {
          command: 'sh',
          args: [
            join(root, 'plugin', 'launch', 'run-node.sh'),
            'server',
            join(root, 'plugin', 'dist', 'server.mjs'),
          ],
        },
      },
    }),
  );
  writeFileSync(join(dir, 'hooks', 'hooks.json'), JSON.stringify({ hooks }));
}

/** tool_use → tool_result milliseconds of each Bash call of one `claude -p` session. */
async function session(binary, fakes, { temp, plugin }) {
  const steps = [
    ...Array.from({ length: CALLS }, (_, index) => ({
      toolUses: [
        { id: `toolu_${index}`, name: 'Bash', input: { command: 'true', description: 'x' } },
      ],
    })),
    { text: 'Done.' },
  ];
  const fake = await fakes.startFakeProvider({ respond: fakes.byAssistantTurn(steps) });
  const home = mkdtempSync(join(temp, 'home-'));
  for (const dir of ['tmp', 'run', 'project', 'data']) mkdirSync(join(home, dir));
  const child = spawn(
    binary,
    [
      '-p',
      'go',
      '--output-format',
      'stream-json',
      '--verbose',
      '--no-session-persistence',
      '--plugin-dir',
      plugin,
      '--allowedTools',
      'Bash',
    ],
    {
      cwd: join(home, 'project'),
      detached: true,
      stdio: ['ignore', 'pipe', 'ignore'],
      env: {
        PATH: process.env.PATH,
        HOME: home,
        CLAUDE_CODE_TMPDIR: join(home, 'tmp'),
        TMPDIR: join(home, 'tmp'),
        XDG_RUNTIME_DIR: join(home, 'run'),
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_TELEMETRY: '1',
        DISABLE_AUTOUPDATER: '1',
        CLAUDE_CODE_MAX_RETRIES: '0',
        ANTHROPIC_BASE_URL: fake.url,
        ANTHROPIC_API_KEY: 'sk-ant-fake',
        DELEGATE_HOME: join(home, 'data'),
      },
    },
  );
  const usedAt = new Map();
  const times = [];
  let buffered = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => {
    const now = performance.now();
    const lines = (buffered + chunk).split('\n');
    buffered = lines.pop();
    for (const line of lines) {
      let event;
      try {
        event = JSON.parse(line);
      } catch {
        continue;
      }
      for (const block of event.message?.content ?? []) {
        if (block.type === 'tool_use') usedAt.set(block.id, now);
        if (block.type === 'tool_result' && usedAt.has(block.tool_use_id))
          times.push(now - usedAt.get(block.tool_use_id));
      }
    }
  });
  const timer = setTimeout(() => process.kill(-child.pid, 'SIGKILL'), 120_000);
  await new Promise((resolve) => child.on('close', resolve));
  clearTimeout(timer);
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // The group is gone.
  }
  await fake.close();
  if (times.length !== CALLS) throw new Error(`a session ran ${times.length} of ${CALLS} calls`);
  return times;
}

export async function benchHooksInClaudeCode(root) {
  const temp = mkdtempSync(join(tmpdir(), 'delegate-bench-cc-hooks-'));
  const http = createServer((request, response) => {
    request.resume();
    request.on('end', () =>
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}'),
    );
  });
  try {
    const binary = await (await loadTestHelper(root, temp, 'claude-cli')).claudeBinary();
    const fakes = await loadTestHelper(root, temp, 'fake-provider');
    await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
    const all = modes(root, `http://127.0.0.1:${http.address().port}/hook`);
    const samples = Object.fromEntries(Object.keys(all).map((name) => [name, []]));
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const [name, [pre, post]] of Object.entries(all)) {
        const plugin = join(temp, 'plugin');
        pluginWith(root, plugin, {
          ...(pre.length ? { PreToolUse: [{ matcher: 'Bash', hooks: pre }] } : {}),
          ...(post.length ? { PostToolUse: [{ matcher: 'Bash', hooks: post }] } : {}),
        });
        samples[name].push(...(await session(binary, fakes, { temp, plugin })));
      }
    }
    const none = median(samples['no hooks']);
    const floor = median(samples['floor: one `node -e 0` command hook']) - none;
    return {
      title: 'Hooks inside Claude Code',
      note:
        `The real Claude Code ${'2.1.328'} runs ${CALLS} small Bash calls (\`true\`) per session, ${ROUNDS} sessions per way of hooking them, ` +
        "the ways taking turns; each figure is the median time from the model's tool_use to the tool_result in stream-json, less that of the same session with no hooks. " +
        'The floor is one bare `node -e 0` command hook. A shared 2-core machine: compare within this table.',
      rows: [
        ['small Bash call with no hooks (median)', `${none.toFixed(1)} ms`, 'baseline'],
        ['floor: one `node -e 0` command hook adds (median)', `${floor.toFixed(1)} ms`, '1×'],
        ...Object.keys(all)
          .filter((name) => name !== 'no hooks' && !name.startsWith('floor'))
          .map((name) => {
            const added = median(samples[name]) - none;
            return [
              `${name}: PreToolUse + PostToolUse add (median)`,
              `${added.toFixed(1)} ms = ${(added / floor).toFixed(2)}× the floor`,
              name.startsWith('shipped') ? '≤ 0.5×' : '',
            ];
          }),
      ],
    };
  } finally {
    http.close();
    rmSync(temp, { recursive: true, force: true });
  }
}
