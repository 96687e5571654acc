// Attempts: one task run by several workers at once, the first whose test passes wins. Tasks alone
// and with 3 attempts, fake workers passing at a seeded 40 %, through a real `dist/server.mjs`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  branchAnswer,
  ledgerUsdByTask,
  loserLeftovers,
  parseResult,
  settleMs,
  survivors,
} from './attempts-checks.mjs';
import {
  CALL_USD,
  PASS_RATE,
  PRICE,
  PROFILES,
  SEED,
  TEST_COMMAND,
  USAGE,
  fakeWorker,
  makeProject,
  passes,
  writeConfig,
} from './attempts-world.mjs';
import {
  GIT_IDENTITY,
  loadFakeProvider,
  median,
  startRawServer,
  timeToToolsList,
  waitUntilEnded,
} from './lib.mjs';

const TASKS = 30;
const ATTEMPTS = PROFILES.length;

export async function benchAttempts(root) {
  const temp = mkdtempSync(join(tmpdir(), 'delegate-bench-attempts-'));
  const calls = new Map();
  let server;
  let fake;
  try {
    const project = join(temp, 'project');
    makeProject(project);
    fake = await (await loadFakeProvider(root, temp))({ respond: fakeWorker(calls) });
    const dataHome = join(temp, 'data');
    writeConfig(dataHome, fake.openaiBaseUrl);
    const env = {
      PATH: process.env.PATH,
      HOME: temp,
      DELEGATE_HOME: dataHome,
      CLAUDE_PROJECT_DIR: project,
      BENCH_FAKE_KEY: 'fake',
      ...GIT_IDENTITY,
    };
    const script = join(root, 'plugin', 'dist', 'server.mjs');
    if (!(await hasAttempts(script, env))) return missing();
    server = await startRawServer(script, env, project);
    const world = { server, project, dataHome, calls };
    const single = await runMode(world, 's', PROFILES.slice(0, 1));
    const multi = await runMode(world, 'm', PROFILES);
    // Stopped losers get a moment to exit before we count who is left.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const ledger = ledgerTotals(await server.call('usage', { period: 'all' }));
    return report(single, multi, ledger, survivors(temp), loserLeftovers(project));
  } finally {
    server?.close();
    await fake?.close();
    rmSync(temp, { recursive: true, force: true });
  }
}

/** Whether this build's task_start takes `attempts` (the feature may not have landed yet). */
async function hasAttempts(script, env) {
  const { json } = await timeToToolsList(script, env);
  const start = JSON.parse(json).tools.find((tool) => tool.name === 'task_start');
  return Boolean(start?.inputSchema?.properties?.attempts);
}

function missing() {
  return {
    title: 'Attempts',
    note: 'Not measured: this build’s `task_start` has no `attempts` parameter.',
    rows: [],
  };
}

/** The usage tool's all-time total, and the part it says was raced as attempts (NaN when absent). */
function ledgerTotals(text) {
  const all = /^All time: .*?\$([\d.]+)/m.exec(text)?.[1];
  const raced = /raced as attempts: .*?\$([\d.]+)/.exec(text)?.[1];
  return { allUsd: Number(all ?? NaN), racedUsd: Number(raced ?? NaN) };
}

/** Tasks `<mode>-0 …` one at a time, so each task's wall time is its own; one record per task. */
async function runMode({ server, project, dataHome, calls }, mode, profiles) {
  const records = [];
  for (let k = 0; k < TASKS; k += 1) {
    const sentAt = Date.now();
    const started = await server.call('task_start', {
      task: `bench attempts task ${mode}-${k}: make \`${TEST_COMMAND}\` pass.`,
      test_command: TEST_COMMAND,
      ...(profiles.length > 1
        ? { attempts: profiles.length, attempt_profiles: profiles }
        : { profile: profiles[0] }),
    });
    const startMs = Date.now() - sentAt;
    const id = /t_[a-z0-9]{6}/.exec(started)?.[0];
    if (!id) throw new Error(`task_start gave no task id: ${started}`);
    await waitUntilEnded(server, id);
    const ms = Date.now() - sentAt;
    const text = await server.call('task_result', { task_id: id });
    const made = (profile) => calls.get(`${mode}-${k} ${profile}`) ?? 0;
    const ledger = ledgerUsdByTask(dataHome);
    records.push({
      k,
      id,
      ms,
      startMs,
      ...parseResult(text),
      made,
      ledgerUsd: (taskId) => ledger.get(taskId) ?? 0,
      expectedPass: profiles.some((profile) => passes(k, profile)),
      answer: branchAnswer(project, text),
      settleMs: settleMs(dataHome, id),
    });
  }
  return summarize(records);
}

const sameUsd = (a, b) => Math.abs(a - b) < 5e-5; // task_result shows 4 decimals

/**
 * What is wrong with the task's cost, or '': it must be the ledger's records for it (for each
 * attempt, with the task's the sum of the attempts') and the fake's calls × price, where a stopped
 * attempt may leave its last call in flight unbilled (no usage came back).
 */
function costProblem(record) {
  const lines = record.attempts.length
    ? record.attempts
    : [{ id: record.id, profile: PROFILES[0], state: record.state, costUsd: record.costUsd }];
  const total = lines.reduce((sum, line) => sum + line.costUsd, 0);
  const problems = sameUsd(total, record.costUsd) ? [] : [`${record.id} lines sum to ${total}`];
  for (const line of lines) {
    const made = record.made(line.profile);
    const ledger = record.ledgerUsd(line.id);
    const billed = Math.round(ledger / CALL_USD);
    const isInFlight = line.state === 'cancelled' && billed === made - 1;
    if (!sameUsd(line.costUsd, ledger) || !(billed === made || isInFlight))
      problems.push(
        `${line.id} ${line.state}: result $${line.costUsd.toFixed(4)}, ledger $${ledger.toFixed(4)}, ${made} calls`,
      );
  }
  return problems.join('; ');
}

function summarize(records) {
  const passed = records.filter((record) => record.verdict === 'passed');
  const cost = records.reduce((sum, record) => sum + record.costUsd, 0);
  const losers = records.flatMap((record) => record.attempts.slice(1));
  return {
    records,
    passed: passed.length,
    expected: records.filter((record) => record.expectedPass).length,
    costPerPassed: cost / passed.length,
    medianS: median(records.map((record) => record.ms)) / 1000,
    startMs: median(records.map((record) => record.startMs)),
    settled: records.map((record) => record.settleMs).filter((ms) => ms !== undefined),
    costWrong: records.filter((record) => costProblem(record)),
    verdictWrong: records.filter((record) => (record.verdict === 'passed') !== record.expectedPass),
    branchOk: passed.filter((record) => record.answer === 'ok').length,
    stopped: losers.filter((attempt) => attempt.state === 'cancelled').length,
    losers: losers.length,
  };
}

/** The wrong records with what was wrong, for the reader to follow up. */
function wrongList(records, show) {
  return records.length ? ` (${records.map(show).join('; ')})` : '';
}

function note(single, multi) {
  const theory = 100 * (1 - (1 - PASS_RATE) ** ATTEMPTS);
  const error = (p) => (100 * Math.sqrt((p * (1 - p)) / TASKS)).toFixed(1);
  return (
    `${TASKS} tasks run alone and ${TASKS} with \`attempts: ${ATTEMPTS}\` (one profile per attempt, ` +
    `strategy first_pass), one task at a time, through a real \`dist/server.mjs\` against a scripted ` +
    `fake worker that answers at once and writes passing code with probability ${PASS_RATE} (a seeded ` +
    `draw per task and profile, seed ${SEED}; task k alone draws as task k’s first attempt), test ` +
    `\`${TEST_COMMAND}\`, \`tasks.fixRounds: 0\` so one attempt is one try. Each call reports ` +
    `${USAGE.input} input and ${USAGE.output} output tokens at $${PRICE.inputPerMTok}/` +
    `$${PRICE.outputPerMTok} per MTok; costs are the product's own \`cost:\` lines. The seeded sample ` +
    `holds ${single.expected} and ${multi.expected} passable tasks of ${TASKS} (theory ` +
    `${(100 * PASS_RATE).toFixed(0)} % and ${theory.toFixed(1)} %); one task is ` +
    `${(100 / TASKS).toFixed(1)} points and the sampling standard error ${error(PASS_RATE)} and ` +
    `${error(theory / 100)} points, so a rate off theory by that much is the sample, not the product. ` +
    'Pass rates and verdicts repeat exactly with the seed; costs with attempts and times depend on ' +
    'how the race runs: the fake answers at once, so a loser is mostly stopped after its last call ' +
    '(in its test) and stopping saves little here; with slower models a loser stopped before its ' +
    'last call costs less. Times are of this machine under its load at the time.'
  );
}

function report(single, multi, ledger, left, leftovers) {
  const theory = 100 * (1 - (1 - PASS_RATE) ** ATTEMPTS);
  const pct = (count) => `${((100 * count) / TASKS).toFixed(1)} % (${count}/${TASKS})`;
  const usd = (value) => `$${value.toFixed(4)}`;
  const both = [...single.records, ...multi.records];
  const costWrong = [...single.costWrong, ...multi.costWrong];
  const verdictWrong = [...single.verdictWrong, ...multi.verdictWrong];
  const total = (records) => records.reduce((sum, record) => sum + record.costUsd, 0);
  return {
    title: 'Attempts',
    note: note(single, multi),
    rows: [
      ['tasks passed, 1 attempt', pct(single.passed), `≈ ${(100 * PASS_RATE).toFixed(0)} %`],
      [
        `tasks passed, ${ATTEMPTS} attempts`,
        pct(multi.passed),
        `≥ ${Math.floor(theory)} % (1 − ${1 - PASS_RATE}³)`,
      ],
      [
        `cost per passed task, 1 / ${ATTEMPTS} attempts (ratio)`,
        `${usd(single.costPerPassed)} / ${usd(multi.costPerPassed)} (${(multi.costPerPassed / single.costPerPassed).toFixed(2)}×)`,
        '',
      ],
      [
        `wall time per task, 1 / ${ATTEMPTS} attempts (median)`,
        `${single.medianS.toFixed(1)} s / ${multi.medianS.toFixed(1)} s`,
        '',
      ],
      [
        `\`task_start\` answers, 1 / ${ATTEMPTS} attempts (median)`,
        `${single.startMs.toFixed(0)} ms / ${multi.startMs.toFixed(0)} ms`,
        '',
      ],
      [
        'winning attempt ends → task ends (median, from the events)',
        `${median(multi.settled).toFixed(0)} ms`,
        '',
      ],
      [
        'losing attempts stopped / ended on their own',
        `${multi.stopped} / ${multi.losers - multi.stopped}`,
        '',
      ],
      [
        'verdict as the draws predict',
        `${both.length - verdictWrong.length}/${both.length}` +
          wrongList(verdictWrong, (record) => `${record.id} ${record.state}/${record.verdict}`),
        'all',
      ],
      [
        'cost line = the ledger’s records = the fake’s calls × price (task and each attempt)',
        `${both.length - costWrong.length}/${both.length}` + wrongList(costWrong, costProblem),
        'all',
      ],
      [
        '`usage` ledger: all time / raced as attempts, vs the tasks’ cost lines',
        `${usd(ledger.allUsd)} / ${usd(ledger.racedUsd)} vs ${usd(total(both))} / ${usd(total(multi.records))}` +
          (sameUsd(ledger.allUsd, total(both)) ? '' : ' — they differ'),
        'equal',
      ],
      [
        'passed tasks whose branch holds the passing answer',
        `${single.branchOk + multi.branchOk}/${single.passed + multi.passed}`,
        'all',
      ],
      [
        'losers’ branches or worktrees left · processes left 2 s after the last task',
        `${leftovers.length} · ${left.length}` +
          (leftovers.length || left.length ? ` (${[...leftovers, ...left].join('; ')})` : ''),
        '0 · 0',
      ],
    ],
  };
}
