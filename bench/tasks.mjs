// Tasks: task_status size per task, time from task_start to the worker's first model request,
// and the agent loop's overhead per turn against an instant fake provider; each beside its floor
// measured in the same run: `git worktree add` plus a bare Node start, and the same loop in-process.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  BIG_FILES,
  benchProject,
  bundleSource,
  GIT_IDENTITY,
  loadFakeProvider,
  loadTestHelper,
  median,
  startBenchServer,
  startRawServer,
  timeProcess,
  waitUntilEnded,
  writeBigProjectFiles,
} from './lib.mjs';

const TURNS = 60;
/** A credentials.json as `provider_key` and a Copilot login leave it (made-up values). */
const STORED_KEYS = `${JSON.stringify(
  {
    copilot: {
      logins: {
        'https://api.githubcopilot.test': {
          githubToken: 'gho_benchbenchbenchbenchbench',
          githubApi: 'https://api.github.test',
        },
      },
    },
    version: 1,
    keys: {
      cloud: {
        key: 'sk-bench-0123456789abcdefghijklmnopqrstuvwxyz',
        origin: 'https://api.example.test',
        savedAt: '2026-12-05T00:00:00.000Z',
      },
    },
  },
  null,
  2,
)}\n`;
/** Turns of each loop run left out of its steady state (the JIT warms up in the first ones). */
const WARM_TURNS = 20;
/** Rounds of the loop figures, one run of each of the four per round (machine load drifts); 8 start each twice. */
const LOOP_ROUNDS = 8;
/** New sessions' first starts timed, with the sandbox check on record and without. */
const SESSION_ROUNDS = 5;
const TASKS = 10;
/** Starts timed on the big project, after one that loads its server's task host. */
const BIG_STARTS = 5;
const FLOOR_RUNS = 10;
/** Time between one start's first model request and the next start. */
const START_GAP_MS = 1_000;

/** The start's floor: `git worktree add` of a new branch in the project, and a bare `node -e 0`. */
async function startFloor(project, temp, env) {
  const floor = { worktrees: [], nodes: [] };
  for (let index = 0; index < FLOOR_RUNS; index += 1) await floorSample(floor, project, temp, env);
  removeFloorWorktrees(project, temp, FLOOR_RUNS);
  return { worktree: median(floor.worktrees), node: median(floor.nodes) };
}

/** One sample of the start's floor, its worktree `floor-<n>` left in `temp` until removed. */
async function floorSample(floor, project, temp, env) {
  const index = floor.worktrees.length;
  const path = join(temp, `floor-${index}`);
  const args = ['-C', project, 'worktree', 'add', '-q', '-b', `floor-${index}`, path];
  floor.worktrees.push(await timeProcess('git', args, env));
  floor.nodes.push(await timeProcess(process.execPath, ['-e', '0'], env));
}

function removeFloorWorktrees(project, temp, count) {
  for (let index = 0; index < count; index += 1) {
    execFileSync('git', [
      '-C',
      project,
      'worktree',
      'remove',
      '--force',
      join(temp, `floor-${index}`),
    ]);
    execFileSync('git', ['-C', project, 'branch', '-q', '-D', `floor-${index}`]);
  }
}

/**
 * The turn's floor: the same report_progress turns through the agent loop in-process (no job
 * files), one run per call of what this returns; `gaps` gets each run's.
 */
async function loadLoopFloor(root, temp) {
  const { runScriptedAgent } = await loadTestHelper(root, temp, 'agent-run');
  const steps = Array.from({ length: TURNS }, (_, turn) => ({
    toolUses: [{ name: 'report_progress', input: { note: `turn ${turn}` } }],
  }));
  steps.push({ text: 'done' });
  const gaps = [];
  return {
    gaps,
    run: async () => {
      const run = await runScriptedAgent({ steps, root: temp, maxTurns: TURNS + 5 });
      gaps.push(...run.gapsMs);
    },
  };
}

/** The task id in a `task_start` answer. */
const taskIdOf = (text) => /t_[a-z0-9]{6}/.exec(text)[0];

/** The pid of the task host that ran task `id` (job.json's worker). */
function hostOf(dataHome, id) {
  const job = JSON.parse(readFileSync(join(dataHome, 'jobs', id, 'job.json'), 'utf8'));
  if (!job.worker?.hosted) throw new Error(`task ${id} ran in no task host`);
  return job.worker.pid;
}

/**
 * Milliseconds of CPU a process's main thread has had (Linux's /proc schedstat, in ns); undefined
 * where there is none. The loop's turns run on that thread: its CPU per turn is what the turn
 * costs whatever the machine's scheduling does to the wall-clock gaps.
 */
function mainThreadCpuMs(pid) {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return undefined;
  }
}

/**
 * The fake's side of the loop task: report_progress until TURNS turns, then done; `gaps` gets
 * the time from each reply leaving the fake to the next request reaching it, and `cpuPerTurn`
 * each run's CPU per turn of the main thread of process `pidOf()` (the worker's), between the
 * requests after its first and its last tool turn.
 */
function loopScript(pidOf) {
  const gaps = [];
  const cpuPerTurn = [];
  let previous;
  let cpuAtFirst;
  const loopTurn = (prompt) => {
    const now = performance.now();
    const turns = (prompt.match(/"role":"assistant"/g) ?? []).length;
    // A task's first request follows the previous task's last reply: that is no turn.
    if (previous !== undefined && turns > 0) gaps.push(now - previous);
    const pid = pidOf();
    if (turns === 1) cpuAtFirst = pid === undefined ? undefined : mainThreadCpuMs(pid);
    if (turns === TURNS && cpuAtFirst !== undefined) {
      const cpu = mainThreadCpuMs(pid);
      if (cpu !== undefined) cpuPerTurn.push((cpu - cpuAtFirst) / (TURNS - 1));
    }
    const reply =
      turns < TURNS
        ? { toolUses: [{ name: 'report_progress', input: { note: `turn ${turns}` } }] }
        : { text: 'done' };
    previous = performance.now();
    return reply;
  };
  return { gaps, cpuPerTurn, loopTurn };
}

/**
 * The turn's floor across a process boundary: the same loop (no job files) in a Node process of
 * its own, against the fake in this one, as a task worker is. The process is kept across the
 * rounds, so its JIT warms as the task host's does (a fresh process per run measures its cold
 * start instead). Each run is `bare` (what this costs beyond the in-process floor is the boundary
 * itself) or `looks`: with only the looks and the ledger line a task's call needs for the
 * product's promises (test/helpers/agent-run.ts, GuaranteedLooks), at `looks` (a data home, a
 * project and a task id). What a worker's turn costs beyond that is the rest of its bookkeeping.
 */
async function startLoopProcess(root, temp, startFakeProvider, looks) {
  const helper = await bundleSource(root, temp, 'test/helpers/agent-run.ts');
  const runner = join(temp, 'loop-process.mjs');
  writeFileSync(
    runner,
    "import { createInterface } from 'node:readline';\n" +
      `import { runAgentAt } from ${JSON.stringify(pathToFileURL(helper).href)};\n` +
      `const looks = ${JSON.stringify(looks)};\n` +
      'for await (const line of createInterface({ input: process.stdin })) {\n' +
      "  const [baseUrl, mode] = line.split(' ');\n" +
      "  await runAgentAt({ baseUrl, root: process.argv[2], maxTurns: Number(process.argv[3]), ...(mode === 'looks' ? { looks } : {}) });\n" +
      "  process.stdout.write('done\\n');\n" +
      '}\n',
  );
  const child = spawn(process.execPath, [runner, temp, String(TURNS + 5)], {
    env: { PATH: process.env.PATH, HOME: temp },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const replies = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const series = { bare: { gaps: [], cpuPerTurn: [] }, looks: { gaps: [], cpuPerTurn: [] } };
  return {
    series,
    /** One run of the loop, `bare` or with `looks`, against a fresh fake. */
    run: async (mode) => {
      const { gaps: runGaps, cpuPerTurn: runCpu, loopTurn } = loopScript(() => child.pid);
      const fake = await startFakeProvider({
        respond: (request) => loopTurn(JSON.stringify(request.body.messages)),
      });
      try {
        child.stdin.write(`${fake.openaiBaseUrl} ${mode}\n`);
        const { value } = await replies.next();
        if (value !== 'done') throw new Error('the loop process ended before its run did');
      } finally {
        await fake.close();
      }
      series[mode].gaps.push(...runGaps);
      series[mode].cpuPerTurn.push(...runCpu);
    },
    close: async () => {
      child.stdin.end();
      const [code] = child.exitCode === null ? await once(child, 'exit') : [child.exitCode];
      if (code !== 0) throw new Error(`the loop process exited with ${code}`);
    },
  };
}

/**
 * Where the `looks` runs look and write: a data home of their own, with the server's config and
 * a job.json of the same size as a loop task's (the size is all a look sees).
 */
function looksDataHome(temp, dataHome, project, jobId) {
  const looksHome = join(temp, 'looks-data');
  const taskDir = join(looksHome, 'jobs', 't_floor0');
  mkdirSync(taskDir, { recursive: true });
  copyFileSync(join(dataHome, 'config.json'), join(looksHome, 'config.json'));
  copyFileSync(join(dataHome, 'jobs', jobId, 'job.json'), join(taskDir, 'job.json'));
  return { dataHome: looksHome, projectDir: project, taskId: 't_floor0' };
}

export async function benchTasks(root) {
  const temp = mkdtempSync(join(tmpdir(), 'delegate-bench-tasks-'));
  try {
    const startFakeProvider = await loadFakeProvider(root, temp);
    const project = benchProject(temp);
    const firstRequestAt = new Map();
    // The server's task host runs the loop tasks (found from the starts' job.json below).
    let hostPid;
    const { gaps, cpuPerTurn, loopTurn } = loopScript(() => hostPid);
    // The same loop for a user with keys stored (credentials.json), read for every model call.
    const keyed = loopScript(() => hostPid);
    // The fake's own work on the growing history is not ours: time from its reply to the next request.
    const fake = await startFakeProvider({
      respond: (request) => {
        const prompt = JSON.stringify(request.body.messages);
        const task = /bench task (\w+)/.exec(prompt)?.[1] ?? '?';
        if (!firstRequestAt.has(task)) firstRequestAt.set(task, request.receivedAt);
        if (task === 'loop') return loopTurn(prompt);
        return task === 'keyed' ? keyed.loopTurn(prompt) : { text: 'done' };
      },
    });
    const { server, env, dataHome } = await startBenchServer(
      root,
      temp,
      project,
      fake.openaiBaseUrl,
      {
        pool: 20,
      },
    );
    const startDelays = [];
    const ids = [];
    /** Milliseconds from `task_start` sent on `on` to its worker's first model request. */
    const startedIds = new Map();
    const timeStart = async (on, name) => {
      const sent = Date.now();
      const text = await on.call('task_start', { task: `bench task ${name}` });
      const id = taskIdOf(text);
      startedIds.set(name, id);
      if (on === server) ids.push(id);
      while (!firstRequestAt.has(name)) await new Promise((resolve) => setTimeout(resolve, 2));
      return firstRequestAt.get(name) - sent;
    };
    for (let index = 0; index < TASKS; index += 1) {
      // A supervisor's turn lies between two starts: the server's task host has loaded.
      if (index > 0) await new Promise((resolve) => setTimeout(resolve, START_GAP_MS));
      startDelays.push(await timeStart(server, `s${index}`));
    }
    // New sessions' servers in the same data home: the first start of each, with the sandbox
    // check the first server recorded and without it (removed), interleaved.
    const sessionStarts = { recorded: [], unrecorded: [] };
    for (let round = 0; round < SESSION_ROUNDS; round += 1) {
      for (const kind of ['recorded', 'unrecorded']) {
        if (kind === 'unrecorded') rmSync(join(dataHome, 'sandbox-check.json'), { force: true });
        const session = await startRawServer(
          join(root, 'plugin', 'dist', 'server.mjs'),
          env,
          project,
        );
        sessionStarts[kind].push(await timeStart(session, `${kind}${round}`));
        session.close();
        // Its task host lets go once its server is gone, before the next server starts.
        await new Promise((resolve) => setTimeout(resolve, START_GAP_MS));
      }
    }
    hostPid = hostOf(dataHome, ids.at(-1));
    const statusText = await server.call('task_status', { task_ids: ids });
    const lines = statusText.split('\n');
    // The loop task, the same with keys stored, and the three floors: one run of each per round,
    // each round starting one further along (whichever runs first in a round measures slower).
    const loopFloor = await loadLoopFloor(root, temp);
    const loopProcess = await startLoopProcess(
      root,
      temp,
      startFakeProvider,
      looksDataHome(temp, dataHome, project, ids.at(-1)),
    );
    const credentials = join(dataHome, 'credentials.json');
    const loopTask = async (name) => {
      if (name === 'keyed') writeFileSync(credentials, STORED_KEYS, { mode: 0o600 });
      const text = await server.call('task_start', {
        task: `bench task ${name}`,
        isolation: 'none',
        max_turns: TURNS + 5,
        wait_s: 100,
      });
      rmSync(credentials, { force: true });
      const id = taskIdOf(text);
      if (hostOf(dataHome, id) !== hostPid) throw new Error(`task ${id} ran on another host`);
    };
    const loopRuns = [
      () => loopTask('loop'),
      () => loopTask('keyed'),
      loopFloor.run,
      () => loopProcess.run('bare'),
      () => loopProcess.run('looks'),
    ];
    for (let round = 0; round < LOOP_ROUNDS; round += 1) {
      for (let index = 0; index < loopRuns.length; index += 1) {
        await loopRuns[(round + index) % loopRuns.length]();
      }
    }
    await loopProcess.close();
    const floorGaps = loopFloor.gaps;
    const { bare, looks } = loopProcess.series;
    const processGaps = bare.gaps;
    server.close();
    // The same start on the big project, with a server and data home of its own.
    const bigTemp = join(temp, 'big');
    mkdirSync(bigTemp);
    let bigBytes = 0;
    const bigProject = benchProject(bigTemp, (dir) => {
      bigBytes = writeBigProjectFiles(dir);
    });
    const big = await startBenchServer(root, bigTemp, bigProject, fake.openaiBaseUrl, {
      pool: 20,
    });
    // Each start beside a sample of its floor (the disk's load drifts with the tasks' files).
    const bigStarts = [];
    const bigFloor = { worktrees: [], nodes: [] };
    const bigEnv = { PATH: process.env.PATH, HOME: bigTemp, ...GIT_IDENTITY };
    try {
      for (let index = 0; index <= BIG_STARTS; index += 1) {
        if (index > 0) await new Promise((resolve) => setTimeout(resolve, START_GAP_MS));
        const ms = await timeStart(big.server, `big${index}`);
        // The task ends at once; its floor sample is taken once its worktree is gone.
        await waitUntilEnded(big.server, startedIds.get(`big${index}`));
        if (index === 0) continue;
        bigStarts.push(ms);
        await new Promise((resolve) => setTimeout(resolve, START_GAP_MS));
        await floorSample(bigFloor, bigProject, bigTemp, bigEnv);
      }
    } finally {
      big.server.close();
    }
    removeFloorWorktrees(bigProject, bigTemp, bigFloor.worktrees.length);
    await fake.close();
    // The environment the server and its workers ran with: a variable of the bench's own shell
    // (NODE_EXTRA_CA_CERTS makes every Node start read a CA bundle, +100 ms here) must not
    // weigh on the floor alone.
    const floor = await startFloor(project, temp, {
      PATH: process.env.PATH,
      HOME: temp,
      ...GIT_IDENTITY,
    });
    const startFloorMs = floor.worktree + floor.node;
    const bigFloorMs = median(bigFloor.worktrees) + median(bigFloor.nodes);
    const bigStartMs = median(bigStarts);
    const loopFloorMs = median(floorGaps);
    const processFloorMs = median(processGaps);
    const looksFloorMs = median(looks.gaps);
    // Each run gives TURNS gaps in order: its steady state is the turns after WARM_TURNS.
    const steady = (series) => median(series.filter((_, index) => index % TURNS >= WARM_TURNS));
    const steadyFloorMs = steady(floorGaps);
    const [firstStartMs, ...laterStarts] = startDelays;
    const startMs = median(laterStarts);
    const turnMs = median(gaps);
    const keyedTurnMs = median(keyed.gaps);
    return {
      title: 'Tasks',
      note: `${TASKS} tasks started one after another through a real \`dist/server.mjs\` in a git repository (worktree each), each ${START_GAP_MS / 1000} s after the previous one's first model request (a supervisor's turn between them; the first start of a server loads its task host, the later ones find it loaded); then ${SESSION_ROUNDS} pairs of new sessions' servers in the same data home, each timed on its first start, with the sandbox check the first server recorded and with that record removed; a ${TURNS}-turn task against an instant fake for the loop overhead, the same task with keys stored in the data home, and the same ${TURNS} turns in-process and in a Node process of its own (kept across the rounds, so that its JIT warms as the task host’s does), one run of each per round, ${LOOP_ROUNDS} rounds, each round starting with the next of the five (the own process runs twice: bare, and with only the looks and ledger line a call needs). Then ${BIG_STARTS + 1} starts on a project of ${BIG_FILES.toLocaleString('en-US')} files through a server of its own, timed after the first, each followed, once its task ended, by a sample of its floor. The start floors are measured in the same run, after the tasks.`,
      rows: [
        [
          '`task_status` line per task (mean / longest)',
          `${Math.round(lines.reduce((sum, line) => sum + line.length, 0) / lines.length)} / ${Math.max(...lines.map((line) => line.length))} chars`,
          '≤ 160 chars',
        ],
        [
          '`task_start` sent → worker’s first model request, later starts (median)',
          `${startMs.toFixed(0)} ms = ${(startMs / startFloorMs).toFixed(1)}× the floor`,
          '≤ 250 ms',
        ],
        [
          'the same, the server’s first start (its task host not loaded yet; one sample)',
          `${firstStartMs.toFixed(0)} ms = ${(firstStartMs / startFloorMs).toFixed(1)}× the floor`,
          'reference',
        ],
        [
          `the same, the first start of a new session’s server in that data home, the sandbox check on record / not (median of ${SESSION_ROUNDS} each, interleaved)`,
          `${median(sessionStarts.recorded).toFixed(0)} / ${median(sessionStarts.unrecorded).toFixed(0)} ms = ${(median(sessionStarts.recorded) / startFloorMs).toFixed(1)}× / ${(median(sessionStarts.unrecorded) / startFloorMs).toFixed(1)}× the floor`,
          'reference',
        ],
        [
          'floor: `git worktree add` + bare `node -e 0` (medians, same run)',
          `${floor.worktree.toFixed(0)} + ${floor.node.toFixed(0)} = ${startFloorMs.toFixed(0)} ms`,
          'baseline',
        ],
        [
          `the same, later starts on a project of ${BIG_FILES.toLocaleString('en-US')} files (${(bigBytes / 1e6).toFixed(1)} MB) with a server of its own (median of ${BIG_STARTS})`,
          `${bigStartMs.toFixed(0)} ms = ${(bigStartMs / bigFloorMs).toFixed(1)}× its floor`,
          'reference',
        ],
        [
          'its floor: `git worktree add` on that project + bare `node -e 0`, a sample after each start (medians)',
          `${median(bigFloor.worktrees).toFixed(0)} + ${median(bigFloor.nodes).toFixed(0)} = ${bigFloorMs.toFixed(0)} ms`,
          'baseline',
        ],
        [
          'agent loop, one turn in the task worker: fake’s reply → next model request, no tool time (median)',
          `${turnMs.toFixed(2)} ms = ${(turnMs / loopFloorMs).toFixed(2)}× the floor`,
          '≤ 1.5× the floor',
        ],
        [
          'the same, with keys stored in credentials.json (a profile’s key and a Copilot login, none of them this profile’s) (median)',
          `${keyedTurnMs.toFixed(2)} ms = ${(keyedTurnMs / loopFloorMs).toFixed(2)}× the floor`,
          '≤ 1.5× the floor',
        ],
        [
          'floor: the same turns through the agent loop in-process, no job files (median, same run)',
          `${loopFloorMs.toFixed(2)} ms`,
          'baseline',
        ],
        [
          'the same loop in a Node process of its own, kept across the rounds, no job files: the process boundary alone (median, same run); the task worker’s turn against it: its bookkeeping alone',
          `${processFloorMs.toFixed(2)} ms = ${(processFloorMs / loopFloorMs).toFixed(2)}× the floor; task worker ${(turnMs / processFloorMs).toFixed(2)}× this`,
          'reference',
        ],
        [
          'the same own process, each call with only what the product’s promises need of it, through the product’s own functions: a look at job.json, config.json, the project’s config, credentials.json and the mailbox, and the call’s ledger line (median, same run): the floor of any worker outside the server that keeps them; the task worker’s turn against it',
          `${looksFloorMs.toFixed(2)} ms = ${(looksFloorMs / loopFloorMs).toFixed(2)}× the floor; task worker ${(turnMs / looksFloorMs).toFixed(2)}× this`,
          'reference',
        ],
        ...(cpuPerTurn.length > 0 && bare.cpuPerTurn.length > 0
          ? [
              [
                'CPU of the main thread per turn (Linux schedstat, between the requests after the first and the last tool turn of a run; median of runs): task host / with keys stored / own process / own process with the looks and ledger line',
                `${[cpuPerTurn, keyed.cpuPerTurn, bare.cpuPerTurn, looks.cpuPerTurn].map((series) => median(series).toFixed(2)).join(' / ')} ms = ${[cpuPerTurn, keyed.cpuPerTurn, looks.cpuPerTurn].map((series) => `${(median(series) / median(bare.cpuPerTurn)).toFixed(2)}×`).join(' / ')} the own process`,
                'reference',
              ],
            ]
          : []),
        [
          `the same, turns ${WARM_TURNS + 1}–${TURNS} of each run only (the JIT warmed up), medians: task worker / with keys stored / own process / own process with the looks / in-process floor`,
          `${[gaps, keyed.gaps, processGaps, looks.gaps, floorGaps].map((series) => steady(series).toFixed(2)).join(' / ')} ms = ${[gaps, keyed.gaps, processGaps, looks.gaps].map((series) => `${(steady(series) / steadyFloorMs).toFixed(2)}×`).join(' / ')} the floor`,
          'reference',
        ],
      ],
    };
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}
