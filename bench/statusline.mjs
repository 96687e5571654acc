// Status line refresh (the sh reader, stdin as Claude Code sends it) against `sh -c true` with
// the same stdin, interleaved; and the CPU the monitor's watcher uses while nothing happens.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, uptime } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { median } from './lib.mjs';

const RUNS = 40;
const IDLE_S = 20;
const OTHER_JOBS = 200;
const WARM_UP_MS = 10_000;

/** What Claude Code pipes to the status line command (about 1.3 KB). */
function statusInput(project) {
  return JSON.stringify({
    session_id: '8f7c2a44-0c1e-4a8e-9c55-3d9b5b1e2f10',
    transcript_path: `/home/u/.claude/projects/${project.replace(/\//g, '-')}/8f7c2a44.jsonl`,
    cwd: project,
    model: { id: 'claude-opus-5-5', display_name: 'Opus' },
    workspace: { current_dir: project, project_dir: project, added_dirs: [] },
    version: '2.1.328',
    output_style: { name: 'default' },
    cost: {
      total_cost_usd: 0.42,
      total_duration_ms: 912345,
      total_api_duration_ms: 123456,
      total_lines_added: 120,
      total_lines_removed: 33,
    },
    context_window: {
      total_input_tokens: 51234,
      total_output_tokens: 4321,
      context_window_size: 200000,
      used_percentage: 27,
      remaining_percentage: 73,
      current_usage: null,
    },
    exceeds_200k_tokens: false,
    fast_mode: false,
    thinking: { enabled: true },
  });
}

function timeRun(args, input) {
  const started = process.hrtime.bigint();
  const result = spawnSync('sh', args, { input, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`sh ${args.join(' ')} exited ${result.status}`);
  return { ms: Number(process.hrtime.bigint() - started) / 1e6, stdout: result.stdout };
}

function refreshRows(root, temp) {
  const dataHome = join(temp, 'data');
  const project = join(temp, 'my project');
  const empty = join(temp, 'quiet project');
  for (const dir of [join(dataHome, 'bin'), join(dataHome, 'status'), project, empty])
    mkdirSync(dir, { recursive: true });
  const reader = join(dataHome, 'bin', 'delegate-statusline.sh');
  writeFileSync(reader, readFileSync(join(root, 'plugin', 'statusline', 'statusline.sh')));
  const chain = join(dataHome, 'chain.sh');
  writeFileSync(chain, 'printf "Opus · 27%%\\n"\n');
  const now = Math.floor(Date.now() / 1000);
  const bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  const others = Array.from(
    { length: 6 },
    (_, index) => `${now + 600} ${temp}/other-${index}\tt_oth00${index} · step 1/40 · running\n`,
  );
  const own = [
    `${now + 900} ${project}\tt_ask001 asks "Drop the v1 endpoint?" → task_answer\n`,
    `${now + 600} ${project}\tt_run001 · local qwen3-coder:30b · step 5/40 · run_bash: npm test\n`,
    `${now + 300} ${project}\tt_end001 done passed · review pass → task_result\n`,
  ];
  // As the task engine writes it: the clock line, the marker, each session's own parts (here
  // every task is of the session the reader is told), then every project's whole line.
  const session = `session ${JSON.parse(statusInput(project)).session_id} `;
  const parts = [...others, ...own];
  writeFileSync(
    join(dataHome, 'status', 'lines'),
    `clock ${bootId} ${Math.round(now - uptime())}\nsessions\n` +
      `${parts.map((line) => session + line).join('')}${parts.join('')}`,
  );
  const cases = [
    ['reader, 3 fresh parts', [reader], statusInput(project)],
    ['reader, no tasks in the project', [reader], statusInput(empty)],
    ['reader chaining another status line command', [reader, chain], statusInput(project)],
  ];
  const first = timeRun([reader], statusInput(project)).stdout;
  if (!first.startsWith('delegate: t_ask001')) throw new Error(`reader printed: ${first}`);
  const samples = { base: [], ...Object.fromEntries(cases.map(([name]) => [name, []])) };
  for (let run = 0; run < RUNS; run += 1) {
    samples.base.push(timeRun(['-c', 'true'], statusInput(project)).ms);
    for (const [name, args, input] of cases) samples[name].push(timeRun(args, input).ms);
  }
  const base = median(samples.base);
  return [
    ['`sh -c true`, same stdin (median)', `${base.toFixed(1)} ms`, 'baseline'],
    ...cases.map(([name], index) => {
      const ms = median(samples[name]);
      return [
        `${name} (median)`,
        `${ms.toFixed(1)} ms (+${(ms - base).toFixed(1)} ms over baseline)`,
        index < 2 ? '≤ 15 ms' : '',
      ];
    }),
  ];
}

function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function idleCpu(root, temp, pollMs) {
  const dataHome = join(temp, `watch-${pollMs ?? 'default'}`);
  const project = join(temp, 'my project');
  const ended = new Date().toISOString();
  for (let index = 0; index < OTHER_JOBS + 5; index += 1) {
    const id = `t_b${String(index).padStart(5, '0')}`;
    mkdirSync(join(dataHome, 'jobs', id), { recursive: true });
    const owner = index < 5 ? project : join(temp, `other-${index % 7}`);
    const job = { id, project: owner, state: 'done', verdict: 'passed', endedAt: ended };
    writeFileSync(join(dataHome, 'jobs', id, 'job.json'), JSON.stringify(job));
  }
  const env = {
    PATH: process.env.PATH,
    HOME: temp,
    DELEGATE_HOME: dataHome,
    CLAUDE_PROJECT_DIR: project,
    ...(pollMs ? { DELEGATE_WATCH_POLL_MS_FOR_TEST: String(pollMs) } : {}),
  };
  const child = spawn(process.execPath, [join(root, 'plugin', 'dist', 'cli.mjs'), 'watch'], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let lines = 0;
  child.stdout.on('data', (chunk) => (lines += String(chunk).split('\n').length - 1));
  try {
    // Past start-up (module compilation, the first scan, a first GC).
    await sleep(WARM_UP_MS);
    if (lines !== 5) throw new Error(`the watcher printed ${lines} lines, not 5`);
    const before = cpuMs(child.pid);
    await sleep(IDLE_S * 1000);
    return { ms: cpuMs(child.pid) - before, lines };
  } finally {
    child.kill('SIGKILL');
  }
}

export async function benchStatusLine(root) {
  const temp = mkdtempSync(join(tmpdir(), 'delegate-bench-statusline-'));
  try {
    const rows = refreshRows(root, temp);
    const idle = await idleCpu(root, temp, undefined);
    const polling = await idleCpu(root, temp, 1_000);
    const perPoll = polling.ms / IDLE_S;
    rows.push(
      [
        `\`delegate watch\` idle ${IDLE_S} s, default 30 s fallback poll (CPU)`,
        `${idle.ms} ms = ${((idle.ms / (IDLE_S * 1000)) * 100).toFixed(2)} % of a core`,
        'no busy polling',
      ],
      [
        `one fallback poll over ${OTHER_JOBS + 5} job files (CPU, measured at 1 poll/s)`,
        `${perPoll.toFixed(1)} ms`,
        '',
      ],
    );
    return {
      title: 'Status line and monitor',
      note:
        `Status line refresh: the sh reader from spawn to exit with Claude Code's status JSON on stdin, 9 tasks of 7 projects on the status lines (${RUNS} interleaved runs each), ` +
        `against \`sh -c true\`. Watcher: CPU time (/proc) of \`dist/cli.mjs watch\` over ${IDLE_S} s with nothing changing, after ${WARM_UP_MS / 1000} s of start-up, ${OTHER_JOBS + 5} tasks in the data home.`,
      rows,
    };
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}
