// Routing: a seeded world of 200 tasks of three kinds and three profiles whose pass rates depend
// on the kind (the cheap one good at docs, hopeless at fixes and features), run five ways: each
// profile alone, the fixed ladder cheap → mid → strong, and `auto` — the product's own
// chooseProfile on a real data home, learning from the outcomes it records as it goes (its
// warm-up counts), climbing its own order. Every strategy faces the same draws.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSource, median } from './lib.mjs';

const TASKS = 200;
const SEEDS = [20261202, 1, 2, 3, 4];
/** USD per run, in the ratio of real prices. */
const COST = { cheap: 0.01, mid: 0.05, strong: 0.3 };
const PROFILES = Object.keys(COST);
/**
 * Pass rate per kind and profile: the cheap one good at docs and hopeless at fixes and features,
 * the others alike on every kind; averaged over the kinds 30 % / 60 % / 90 %, the independent
 * world whose ladder theory is 97 % at 40 % of strong's cost per pass.
 */
const RATES = {
  docs: { cheap: 0.9, mid: 0.6, strong: 0.9 },
  fix: { cheap: 0.0, mid: 0.6, strong: 0.9 },
  feature: { cheap: 0.0, mid: 0.6, strong: 0.9 },
};
/** A task of each kind as a supervisor would word it (the product classifies the words). */
const TEXT = {
  docs: 'Document the options of the parser in its README',
  fix: 'Fix the crash when the input file is empty',
  feature: 'Add a --json flag that prints the report as JSON',
};
const KINDS = Object.keys(RATES);

/** The world: each task's kind and, per profile, whether its run passes (independent draws). */
function makeWorld(seed, seededRandom) {
  const random = seededRandom(seed);
  return Array.from({ length: TASKS }, () => {
    const kind = KINDS[Math.floor(random() * KINDS.length)];
    const passes = Object.fromEntries(PROFILES.map((p) => [p, random() < RATES[kind][p]]));
    return { kind, passes };
  });
}

function tally(runs) {
  const passed = runs.filter((run) => run.passed).length;
  const cost = runs.reduce((sum, run) => sum + run.cost, 0);
  return { passed, rate: passed / runs.length, cost, perPass: passed ? cost / passed : Infinity };
}

function climb(task, order) {
  let cost = 0;
  for (const profile of order) {
    cost += COST[profile];
    if (task.passes[profile]) return { passed: true, cost, rungs: order.indexOf(profile) + 1 };
  }
  return { passed: false, cost, rungs: order.length };
}

/** `auto` through the product: a real data home, config and outcomes file. */
async function runAuto(modules, temp, world, seed, { ladder }) {
  const { chooseProfile, appendOutcome, taskKind } = modules;
  const dataHome = join(temp, `data-${seed}-${ladder ? 'l' : 's'}`);
  const project = join(temp, 'project');
  mkdirSync(dataHome, { recursive: true });
  mkdirSync(project, { recursive: true });
  // Prices such that a typical task (150k tokens in, 8k out) costs COST: the prior's estimate.
  const profiles = Object.fromEntries(
    PROFILES.map((name) => [
      name,
      {
        format: 'openai',
        baseUrl: 'http://127.0.0.1:9/v1',
        model: name,
        price: { inputPerMTok: (COST[name] / 150_000) * 1e6, outputPerMTok: 0 },
      },
    ]),
  );
  writeFileSync(
    join(dataHome, 'config.json'),
    JSON.stringify({ profiles, defaultProfile: 'cheap' }),
  );
  const context = {
    env: { HOME: temp, DELEGATE_HOME: dataHome, DELEGATE_ROUTING_SEED: String(seed) },
    projectDir: project,
    dataHome,
    now: () => new Date(),
    pluginRoot: temp,
  };
  const runs = [];
  const chooseMs = [];
  const firstPicks = [];
  for (const [index, task] of world.entries()) {
    const kind = taskKind(TEXT[task.kind]);
    const started = performance.now();
    const { ranked } = await chooseProfile({ work: 'task', kind }, context);
    chooseMs.push(performance.now() - started);
    const order = ranked.map((entry) => entry.name).slice(0, ladder ? 3 : 1);
    firstPicks.push({ index, kind: task.kind, profile: order[0] });
    let cost = 0;
    let passed = false;
    for (const profile of order) {
      cost += COST[profile];
      passed = task.passes[profile];
      await appendOutcome(dataHome, {
        ts: new Date().toISOString(),
        work: 'task',
        project,
        profile,
        kind,
        passed,
        by: 'tests',
        costUsd: COST[profile],
        ms: 1,
      });
      if (passed) break;
    }
    runs.push({ passed, cost });
  }
  return { ...tally(runs), chooseMs: median(chooseMs), firstPicks };
}

/** Theory for this world with kinds equally likely: each profile alone and the ladder. */
function theory() {
  const mean = (f) => KINDS.reduce((sum, kind) => sum + f(RATES[kind]), 0) / KINDS.length;
  const alone = Object.fromEntries(
    PROFILES.map((p) => [p, { rate: mean((r) => r[p]), cost: COST[p] }]),
  );
  const ladderRate = mean((r) => 1 - (1 - r.cheap) * (1 - r.mid) * (1 - r.strong));
  const ladderCost = mean(
    (r) => COST.cheap + (1 - r.cheap) * (COST.mid + (1 - r.mid) * COST.strong),
  );
  return { alone, ladder: { rate: ladderRate, cost: ladderCost } };
}

const pct = (x) => `${(x * 100).toFixed(1)} %`;
const usd = (x) => `$${x.toFixed(4)}`;

export async function benchRouting(root) {
  const temp = mkdtempSync(join(tmpdir(), 'delegate-bench-routing-'));
  try {
    const modules = {
      ...(await loadSource(root, temp, 'server/src/calls/choose-profile.ts')),
      ...(await loadSource(root, temp, 'server/src/calls/outcomes.ts')),
      ...(await loadSource(root, temp, 'server/src/calls/task-kind.ts')),
    };
    const results = { cheap: [], mid: [], strong: [], ladder: [], autoOne: [], auto: [] };
    const chooseMs = [];
    let lastPicks;
    for (const seed of SEEDS) {
      const world = makeWorld(seed, modules.seededRandom);
      for (const profile of PROFILES) {
        results[profile].push(
          tally(world.map((task) => ({ passed: task.passes[profile], cost: COST[profile] }))),
        );
      }
      results.ladder.push(tally(world.map((task) => climb(task, PROFILES))));
      const one = await runAuto(modules, temp, world, seed, { ladder: false });
      const auto = await runAuto(modules, temp, world, seed, { ladder: true });
      results.autoOne.push(one);
      results.auto.push(auto);
      chooseMs.push(one.chooseMs, auto.chooseMs);
      if (seed === SEEDS[0]) lastPicks = auto.firstPicks;
    }
    const summary = Object.fromEntries(
      Object.entries(results).map(([name, runs]) => [
        name,
        {
          rate: median(runs.map((r) => r.rate)),
          perPass: median(runs.map((r) => r.perPass)),
          rates: runs.map((r) => r.rate),
        },
      ]),
    );
    const strong = summary.strong.perPass;
    const ratio = (name) => `${((summary[name].perPass / strong) * 100).toFixed(1)} %`;
    const expected = theory();
    const row = (label, name, bar = '') => [
      label,
      `${pct(summary[name].rate)} · ${usd(summary[name].perPass)} per pass (${ratio(name)} of strong's)`,
      bar,
    ];
    // Where auto's first pick went in the last 100 tasks of the first world, per kind.
    const late = lastPicks.slice(-100);
    const picks = KINDS.map((kind) => {
      const ofKind = late.filter((pick) => pick.kind === kind);
      const counts = PROFILES.map(
        (p) => `${p} ${ofKind.filter((pick) => pick.profile === p).length}`,
      );
      return `${kind}: ${counts.join(', ')}`;
    }).join('; ');
    const t = expected;
    return {
      title: 'Routing: auto and the ladder on a seeded world',
      note:
        `${TASKS} tasks of three kinds (docs, fix, feature; drawn equally) in a seeded order, for ${SEEDS.length} world seeds (${SEEDS.join(', ')}); medians over the seeds. ` +
        `Three profiles at $${COST.cheap} / $${COST.mid} / $${COST.strong} a run; pass rates by kind ` +
        KINDS.map(
          (kind) =>
            `${kind} ${PROFILES.map((p) => `${Math.round(RATES[kind][p] * 100)}`).join('/')} %`,
        ).join(', ') +
        ` (cheap/mid/strong; averaged over the kinds 30/60/90 %), independent draws, the same for every strategy. ` +
        'A profile alone runs each task once; the fixed ladder climbs cheap → mid → strong until a run passes; ' +
        '`auto` is the product’s `chooseProfile` on a real data home and config (prices such that a typical task costs the figures above), ' +
        'recording each run in outcomes.jsonl as it goes from an empty record, so its warm-up counts: “auto, one pick” runs its first choice only, ' +
        '“auto” climbs its own order (up to 3 rungs), as `profile: "auto"` does for a task with a test command. ' +
        `Theory for this world: alone ${PROFILES.map((p) => `${p} ${pct(t.alone[p].rate)}`).join(', ')}; the ladder ${pct(t.ladder.rate)} at ${usd(t.ladder.cost / t.ladder.rate)} per pass.`,
      rows: [
        row('cheap alone', 'cheap'),
        row('mid alone', 'mid'),
        row('strong alone', 'strong', 'the baseline'),
        row('fixed ladder cheap → mid → strong', 'ladder'),
        row('auto, one pick', 'autoOne'),
        row(
          'auto (climbing its own order)',
          'auto',
          '≥ strong’s pass rate at ≤ 40 % of its cost per pass',
        ),
        [
          'auto: pass rate per seed',
          summary.auto.rates.map(pct).join(', '),
          `strong: ${summary.strong.rates.map(pct).join(', ')}`,
        ],
        [
          'auto: cost per pass per seed',
          results.auto.map((r) => usd(r.perPass)).join(', '),
          `fixed ladder: ${results.ladder.map((r) => usd(r.perPass)).join(', ')}; auto cheaper in ${results.auto.filter((r, i) => r.perPass < results.ladder[i].perPass).length} of ${SEEDS.length}`,
        ],
        ['auto’s first pick in tasks 101–200 (first seed)', picks, ''],
        [
          'one choice (reads outcomes.jsonl of up to 600 lines), median',
          `${median(chooseMs).toFixed(2)} ms`,
          '',
        ],
      ],
    };
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}

// Run alone: `node bench/routing.mjs`.
if (import.meta.url === `file://${process.argv[1]}`) {
  const { dirname } = await import('node:path');
  const { fileURLToPath } = await import('node:url');
  const section = await benchRouting(join(dirname(fileURLToPath(import.meta.url)), '..'));
  console.log(section.title);
  for (const [figure, value, bar] of section.rows)
    console.log(`  ${figure}: ${value}${bar ? ` (${bar})` : ''}`);
}
