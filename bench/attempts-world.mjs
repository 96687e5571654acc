// The simulated world of the attempts bench: a project whose test passes iff answer.txt says ok,
// and fake workers that write ok with a seeded pass rate, priced so the product's ledger has real
// arithmetic to do.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GIT_IDENTITY } from './lib.mjs';

export const PASS_RATE = 0.4;
export const SEED = 20261201;
/** One profile per attempt; each names its own model, so the fake knows whose request it answers. */
export const PROFILES = ['try1', 'try2', 'try3'];
export const PRICE = { inputPerMTok: 3, outputPerMTok: 15 };
/** Every fake reply reports this usage: a call costs 2000 × $3/M + 400 × $15/M = $0.012. */
export const USAGE = { input: 2000, output: 400 };
export const CALL_USD =
  (USAGE.input * PRICE.inputPerMTok + USAGE.output * PRICE.outputPerMTok) / 1e6;
export const TEST_COMMAND = 'sh check.sh';

/** FNV-1a of a string, the seed of one draw. */
function hash(text) {
  let h = 0x811c9dc5;
  for (const char of text) h = Math.imul(h ^ char.charCodeAt(0), 0x01000193) >>> 0;
  return h;
}

/** mulberry32's first output for a seed: one uniform draw in [0, 1). */
function draw(seed) {
  let t = (seed + 0x6d2b79f5) >>> 0;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

/**
 * Whether the worker of `profile` writes passing code on task number `k`. Keyed by task number
 * and profile only, never by run or arrival order: the single run's task k and the first attempt
 * of the attempts run's task k draw alike (a paired sample), and racing workers cannot shift it.
 */
export function passes(k, profile) {
  return draw(hash(`${SEED}:${k}:${profile}`)) < PASS_RATE;
}

/** A git repository whose test passes iff answer.txt says ok (it says bad). */
export function makeProject(project) {
  mkdirSync(project);
  writeFileSync(join(project, 'check.sh'), 'grep -qx ok answer.txt\n');
  writeFileSync(join(project, 'answer.txt'), 'bad\n');
  for (const args of [
    ['init', '-q', '-b', 'main'],
    ['add', '-A'],
    ['commit', '-qm', 'init'],
  ])
    execFileSync('git', args, { cwd: project, env: { ...process.env, ...GIT_IDENTITY } });
}

/**
 * The scripted worker: turn 0 writes answer.txt (ok or bad by the draw for its task and model),
 * turn 1 answers with text. Counts the calls per `<task> <profile>` for the cost check.
 */
export function fakeWorker(calls) {
  return (request) => {
    const messages = request.body?.messages ?? [];
    const task = /bench attempts task (\w+-\d+)/.exec(JSON.stringify(messages))?.[1] ?? '?';
    const profile = String(request.body?.model ?? '').replace(/^model-/, '');
    const key = `${task} ${profile}`;
    calls.set(key, (calls.get(key) ?? 0) + 1);
    const turn = messages.filter((message) => message?.role === 'assistant').length;
    if (turn > 0) return { text: 'Wrote answer.txt.', usage: USAGE };
    const content = passes(Number(task.split('-')[1]), profile) ? 'ok\n' : 'bad\n';
    const write = { name: 'write_file', input: { path: 'answer.txt', content } };
    return { toolUses: [write], usage: USAGE };
  };
}

/** config.json: a priced cloud profile per attempt on the fake, and no fix rounds. */
export function writeConfig(dataHome, baseUrl) {
  const profile = (name) => ({
    format: 'openai',
    baseUrl,
    model: `model-${name}`,
    apiKeyEnv: 'BENCH_FAKE_KEY',
    pool: 20,
    price: PRICE,
  });
  mkdirSync(dataHome);
  const config = {
    profiles: Object.fromEntries(PROFILES.map((name) => [name, profile(name)])),
    // One attempt is one try: a failing test does not go back to the worker.
    tasks: { fixRounds: 0 },
  };
  writeFileSync(join(dataHome, 'config.json'), JSON.stringify(config));
}
