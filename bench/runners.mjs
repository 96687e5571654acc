// Runners: what a task's command costs on an SSH runner (a real sshd on 127.0.0.1, the test's
// fixture) against the same task run locally, through a real `dist/server.mjs` and its workers.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BIG_FILES,
  GIT_IDENTITY,
  loadFakeProvider,
  loadTestHelper,
  median,
  startRawServer,
  waitUntilEnded,
  writeBigProjectFiles,
} from './lib.mjs';

const STEPS = 15;
const RUNS = 5;
const BIG_RUNS = 3;
const RAW_SSH_RUNS = 15;
const TRUE = 'true';
const WRITE = 'echo $RANDOM > f.txt';
const COMMANDS = { true: TRUE, write: WRITE };

export async function benchRunners(root) {
  if (process.platform !== 'linux') return missing('the sshd fixture runs on Linux only.');
  const temp = mkdtempSync(join(tmpdir(), 'delegate-bench-runners-'));
  let sshd;
  let fake;
  let server;
  try {
    const { startSshd, runnerConfig } = await loadTestHelper(root, temp, 'sshd');
    sshd = await startSshd();
    // Each task's replies by its tag: the moment each of its model requests reached the fake.
    const seen = new Map();
    fake = await (
      await loadFakeProvider(root, temp)
    )({
      respond: (request) => {
        const now = performance.now();
        const prompt = JSON.stringify(request.body.messages);
        const match = /bench runners task (\S+) steps (\d+) command (\w+)/.exec(prompt);
        if (!match) return { text: 'done' };
        const [, tag, steps, key] = match;
        const command = COMMANDS[key];
        const times = seen.get(tag) ?? [];
        seen.set(tag, [...times, now]);
        const turns = (prompt.match(/"role":"assistant"/g) ?? []).length;
        return turns < Number(steps)
          ? { toolUses: [{ name: 'run_bash', input: { command } }] }
          : { text: 'done' };
      },
    });
    const dataHome = join(temp, 'data');
    mkdirSync(dataHome);
    const writeConfig = (extra) =>
      writeFileSync(
        join(dataHome, 'config.json'),
        JSON.stringify({
          ...extra,
          runners: { build: runnerConfig(sshd) },
          profiles: {
            w: { format: 'openai', baseUrl: fake.openaiBaseUrl, model: 'm', local: true, pool: 20 },
          },
        }),
      );
    writeConfig({});
    const gitEnv = { ...process.env, ...GIT_IDENTITY };
    const envFor = (project) => ({
      PATH: process.env.PATH,
      HOME: temp,
      DELEGATE_HOME: dataHome,
      CLAUDE_PROJECT_DIR: project,
      ...GIT_IDENTITY,
    });
    const script = join(root, 'plugin', 'dist', 'server.mjs');
    let counter = 0;
    /** One task, to its end; its step times (ms from one model request to the next). */
    const runTask = async (command, steps, runner) => {
      const tag = `r${(counter += 1)}`;
      const started = await server.call('task_start', {
        task: `bench runners task ${tag} steps ${steps} command ${command === TRUE ? 'true' : 'write'}`,
        max_turns: steps + 5,
        ...(runner ? { runner: 'build' } : {}),
      });
      const id = /t_[a-z0-9]{6}/.exec(started)?.[0];
      if (!id) throw new Error(`task_start gave no task id: ${started}`);
      const status = await waitUntilEnded(server, id);
      if (!status.startsWith(`${id} done`)) throw new Error(`task ${tag} ended: ${status}`);
      const times = seen.get(tag) ?? [];
      if (times.length !== steps + 1) throw new Error(`task ${tag}: ${times.length} requests`);
      return times.slice(1).map((time, index) => time - times[index]);
    };

    // 1. Per command, on a small project: steps 2…K (the first carries the first snapshot).
    const small = join(temp, 'small');
    makeProject(small, gitEnv, (dir) => {
      writeFileSync(join(dir, 'README.md'), 'bench\n');
      writeFileSync(join(dir, 'f.txt'), '0\n');
    });
    server = await startRawServer(script, envFor(small), small);
    const perStep = { local: { [TRUE]: [], [WRITE]: [] }, runner: { [TRUE]: [], [WRITE]: [] } };
    const firstSmall = { local: [], runner: [] };
    for (let run = 0; run < RUNS; run += 1) {
      for (const command of [TRUE, WRITE]) {
        for (const where of run % 2 ? ['runner', 'local'] : ['local', 'runner']) {
          const gaps = await runTask(command, STEPS, where === 'runner');
          perStep[where][command].push(median(gaps.slice(1)));
          firstSmall[where].push(gaps[0]);
        }
      }
    }
    server.close();
    server = undefined;

    // The same `true` steps with the OS sandbox off, here and there.
    writeConfig({ sandbox: 'off' });
    server = await startRawServer(script, envFor(small), small);
    const unsandboxed = { local: [], runner: [] };
    for (let run = 0; run < RUNS; run += 1) {
      for (const where of run % 2 ? ['runner', 'local'] : ['local', 'runner']) {
        const gaps = await runTask(TRUE, STEPS, where === 'runner');
        unsandboxed[where].push(median(gaps.slice(1)));
      }
    }
    server.close();
    server = undefined;
    writeConfig({});

    // The floor under a runner command: one ssh round trip over a shared connection.
    const rawSsh = sshRoundTrips(sshd, temp);

    // 2. The first command on a bigger project: the whole snapshot goes over.
    const big = join(temp, 'big');
    const bigBytes = makeProject(big, gitEnv, (dir) => writeBigProjectFiles(dir));
    server = await startRawServer(script, envFor(big), big);
    const firstBig = { local: [], runner: [] };
    for (let run = 0; run < BIG_RUNS; run += 1) {
      for (const where of run % 2 ? ['runner', 'local'] : ['local', 'runner']) {
        const [first] = await runTask(TRUE, 1, where === 'runner');
        firstBig[where].push(first);
      }
    }
    server.close();
    server = undefined;
    const phases = snapshotPhases(big, sshd, temp, gitEnv);
    return report({ perStep, unsandboxed, firstSmall, firstBig, rawSsh, bigBytes, phases, sshd });
  } finally {
    server?.close();
    await fake?.close();
    await sshd?.stop();
    rmSync(temp, { recursive: true, force: true });
  }
}

function missing(reason) {
  return { title: 'Runners', note: `Not measured: ${reason}`, rows: [] };
}

/** A git repository at `dir` with what `fill` writes, committed; its files' total bytes. */
function makeProject(dir, gitEnv, fill) {
  mkdirSync(dir);
  const bytes = fill(dir) ?? 0;
  for (const args of [
    ['init', '-q', '-b', 'main'],
    ['add', '-A'],
    ['commit', '-qm', 'init'],
  ])
    execFileSync('git', args, { cwd: dir, env: gitEnv });
  return bytes;
}

/** `sshd.sshArgs` with a shared connection of our own at `control` (as runners use one). */
function sharedSshArgs(sshd, control) {
  return [
    ...sshd.sshArgs.slice(0, -1),
    '-o',
    'ControlMaster=auto',
    '-o',
    `ControlPath=${control}`,
    '-o',
    'ControlPersist=30',
    sshd.sshArgs.at(-1),
  ];
}

const timed = (action) => {
  const started = performance.now();
  const value = action();
  return [performance.now() - started, value];
};

/**
 * The big project's first snapshot by hand, each phase timed (median of BIG_RUNS): what a
 * runner's first command does before the command, without the server around it.
 */
function snapshotPhases(project, sshd, temp, gitEnv) {
  const args = sharedSshArgs(sshd, join(temp, 'cm-phases'));
  const gitIn = (gitArgs, options = {}) =>
    execFileSync('git', gitArgs, { cwd: project, maxBuffer: 1 << 30, ...options });
  const runs = { tree: [], pack: [], send: [] };
  let packBytes = 0;
  try {
    spawnSync('ssh', [...args, 'true'], { stdio: 'ignore' });
    for (let run = 0; run < BIG_RUNS; run += 1) {
      const index = join(temp, `phases-${run}.index`);
      const [treeMs, tree] = timed(() => {
        const env = { ...gitEnv, GIT_INDEX_FILE: index };
        gitIn(['add', '--all'], { env });
        return gitIn(['write-tree'], { env, encoding: 'utf8' }).trim();
      });
      const commit = gitIn(['commit-tree', tree, '-m', `phases ${run}`], {
        env: gitEnv,
        encoding: 'utf8',
      }).trim();
      const [packMs, pack] = timed(() =>
        // As the product packs a whole snapshot (server/src/runners/remote-shell.ts).
        gitIn(['pack-objects', '--revs', '--thin', '--window=0', '--stdout', '-q'], {
          input: `${commit}\n`,
        }),
      );
      packBytes = pack.length;
      const dir = `${sshd.workdir}/phases-${run}`;
      const [sendMs, sent] = timed(() =>
        spawnSync(
          'ssh',
          [
            ...args,
            `git init -q ${dir} && cd ${dir} && git index-pack --stdin --fix-thin --strict >/dev/null && git reset -q --hard ${commit}`,
          ],
          { input: pack, stdio: ['pipe', 'ignore', 'pipe'] },
        ),
      );
      if (sent.status !== 0) throw new Error(`sending the pack: ${sent.stderr}`);
      runs.tree.push(treeMs);
      runs.pack.push(packMs);
      runs.send.push(sendMs);
    }
  } finally {
    spawnSync('ssh', [...args.slice(0, -1), '-O', 'exit', args.at(-1)], { stdio: 'ignore' });
  }
  return {
    treeMs: median(runs.tree),
    packMs: median(runs.pack),
    sendMs: median(runs.send),
    packBytes,
  };
}

/** Median ms of `ssh … true` over a connection of our own kept open (ControlMaster), as runners do. */
function sshRoundTrips(sshd, temp) {
  const args = sharedSshArgs(sshd, join(temp, 'cm'));
  const times = [];
  try {
    spawnSync('ssh', [...args, 'true'], { stdio: 'ignore' }); // opens the shared connection
    for (let run = 0; run < RAW_SSH_RUNS; run += 1) {
      const started = performance.now();
      spawnSync('ssh', [...args, 'true'], { stdio: 'ignore' });
      times.push(performance.now() - started);
    }
  } finally {
    spawnSync('ssh', [...args.slice(0, -1), '-O', 'exit', args.at(-1)], { stdio: 'ignore' });
  }
  return median(times);
}

const ms = (value) => `${value.toFixed(1)} ms`;
const versus = (runner, local) => `${ms(runner)} = ${(runner / local).toFixed(2)}× local`;

function report({ perStep, unsandboxed, firstSmall, firstBig, rawSsh, bigBytes, phases, sshd }) {
  const step = (where, command) => median(perStep[where][command]);
  const extra = (command) => step('runner', command) - step('local', command);
  return {
    title: 'Runners',
    note:
      `Tasks through a real \`dist/server.mjs\` whose worker runs \`run_bash\` steps against an instant fake provider, locally (own worktree) and on an SSH runner (the tests' real sshd on 127.0.0.1, logging in as ${sshd.separateUser ? `\`${sshd.user}\`` : 'this user'}, so no network in between: the cost of the mechanism, not of a link). ` +
      `A step is the time from one model request to the next (the loop plus the command); per task the median of steps 2–${STEPS} of ${STEPS}, then the median of ${RUNS} tasks each, local and runner interleaved; “OS sandbox off” is the \`true\` series again with \`"sandbox": "off"\` in the config (here and there). ` +
      `The big project: ${BIG_FILES.toLocaleString('en-US')} files, ${(bigBytes / 1e6).toFixed(1)} MB of seeded pseudo-random words, one \`run_bash true\` per task, ${BIG_RUNS} tasks each; its phases timed by hand beside.`,
    rows: [
      ['step `true`, local (median)', ms(step('local', TRUE)), 'baseline'],
      [
        'step `true`, on the runner (median)',
        versus(step('runner', TRUE), step('local', TRUE)),
        '',
      ],
      ['step `true`: runner’s extra per command', ms(extra(TRUE)), ''],
      ['step `echo $RANDOM > f.txt`, local (median)', ms(step('local', WRITE)), 'baseline'],
      [
        'step `echo $RANDOM > f.txt`, on the runner (median; the change comes back)',
        versus(step('runner', WRITE), step('local', WRITE)),
        '',
      ],
      ['step `echo $RANDOM > f.txt`: runner’s extra per command', ms(extra(WRITE)), ''],
      ['step `true`, OS sandbox off, local (median)', ms(median(unsandboxed.local)), 'baseline'],
      [
        'step `true`, OS sandbox off, on the runner (median)',
        versus(median(unsandboxed.runner), median(unsandboxed.local)),
        '',
      ],
      ['bare `ssh … true` over a shared connection (median)', ms(rawSsh), 'reference'],
      [
        'first step of a task, small project: local / runner (median)',
        `${ms(median(firstSmall.local))} / ${ms(median(firstSmall.runner))}`,
        '',
      ],
      ['first step `true`, big project, local (median)', ms(median(firstBig.local)), 'baseline'],
      [
        'first step `true`, big project, on the runner: whole snapshot sent (median)',
        versus(median(firstBig.runner), median(firstBig.local)),
        '',
      ],
      [
        'its phases by hand (median): `git add --all` + `write-tree` / `pack-objects` / ssh + `index-pack` + `reset --hard` there',
        `${ms(phases.treeMs)} / ${ms(phases.packMs)} / ${ms(phases.sendMs)} (pack ${(phases.packBytes / 1e6).toFixed(1)} MB)`,
        'reference',
      ],
    ],
  };
}
