/**
 * `profile: "auto"`: the profile with the most expected passes per dollar for this kind of work
 * in this project, learned from verified outcomes (outcomes.ts). Each candidate's pass rate is
 * a Beta posterior — this project's record of the kind, on a prior from its other work here,
 * on a prior from its work elsewhere, on a prior from its price rank and `use` words — and one
 * draw from each (Thompson sampling) ranks them, so a profile with thin evidence still gets a
 * few cheap tries while the record of the others holds. Its cost is what its work here cost,
 * else what its price makes of a typical run; an attempt is never counted as free (a failed
 * run costs you a look and time), so a free worker that fails loses to a paid one that passes.
 *
 * It never picks a profile the user did not configure, a `local`-only rule's outsider (when the
 * default profile is `local`, only `local` profiles are candidates unless `autoProfiles` says
 * otherwise), or one whose expected cost is over the budget left.
 */
import { randomBytes } from 'node:crypto';
import { loadConfig, type LoadedConfig } from '../profiles/load-config.ts';
import { defaultProfileName, resolveProfile } from '../profiles/resolve-profile.ts';
import { endpointFor } from '../profiles/profile-endpoint.ts';
import type { AppContext } from '../profiles/app-context.ts';
import type { ResolvedProfile } from '../config/resolved-profile.ts';
import { AUTO_PROFILE, isCliFormat } from '../config/config-rules.ts';
import { UserError, errorMessage } from '../util/user-error.ts';
import { formatUsd } from '../util/format-usd.ts';
import { budgetStatus } from './budget.ts';
import { costOf, priceFor } from './pricing.ts';
import { projectKey, readOutcomes, type OutcomeRecord, type WorkType } from './outcomes.ts';
import { workWords } from './scoreboard.ts';
import { useMentions } from './task-kind.ts';

/** A run counts at least this much, so that a free worker's failures still cost something. */
export const ATTEMPT_FLOOR_USD: Record<WorkType, number> = {
  task: 0.01,
  explore: 0.002,
  'one-shot': 0.001,
};

/** Tokens of a typical run, for a cost estimate from the price before any record exists. */
const TYPICAL_TOKENS: Record<WorkType, { input: number; output: number }> = {
  task: { input: 150_000, output: 8_000 },
  explore: { input: 40_000, output: 1_500 },
  'one-shot': { input: 10_000, output: 1_000 },
};

/** Weight, in runs, of each prior level. */
const PRIOR_RUNS = 1;
/** Below this many verified runs of the kind here, a pick is called exploring. */
const THIN_EVIDENCE = 3;

export interface Candidate {
  name: string;
  /** What a run is expected to cost before any record: from its price and a typical run. */
  priorCostUsd: number;
  /** Pass rate believed before any record: from its price rank and `use` words (0–1). */
  priorPass: number;
}

export interface RankedProfile {
  name: string;
  /** The posterior mean pass rate. */
  passRate: number;
  /** The drawn pass rate the ranking used. */
  drawn: number;
  costUsd: number;
  /** What the reason cites: the verified runs of the kind here, else all here, else elsewhere. */
  evidence: { passed: number; verified: number; costUsd: number; where: string };
}

export interface RouteRequest {
  work: WorkType;
  project: string;
  kind: string;
  candidates: readonly Candidate[];
  records: readonly OutcomeRecord[];
  random: () => number;
}

/** The candidates, best first by one Thompson draw each. */
export function rankProfiles(request: RouteRequest): RankedProfile[] {
  const { work, project, kind, records, random } = request;
  const ofWork = records.filter((record) => record.work === work && record.passed !== null);
  const ranked = request.candidates.map((candidate) => {
    const mine = ofWork.filter((record) => record.profile === candidate.name);
    const here = mine.filter((record) => record.project === project);
    const cell = here.filter((record) => record.kind === kind);
    const restHere = here.filter((record) => record.kind !== kind);
    const elsewhere = mine.filter((record) => record.project !== project);
    const elsewhereMean = shrink(elsewhere, candidate.priorPass);
    const hereMean = shrink(restHere, elsewhereMean);
    const passes = cell.filter((record) => record.passed).length;
    const alpha = PRIOR_RUNS * hereMean + passes;
    const beta = PRIOR_RUNS * (1 - hereMean) + (cell.length - passes);
    const costUsd = Math.max(
      expectedCost([cell, here, mine], candidate.priorCostUsd),
      ATTEMPT_FLOOR_USD[work],
    );
    const drawn = sampleBeta(alpha, beta, random);
    return {
      name: candidate.name,
      passRate: alpha / (alpha + beta),
      drawn,
      costUsd,
      evidence: citedEvidence(cell, here, elsewhere, kind, work),
      score: drawn / costUsd,
    };
  });
  return ranked
    .sort((a, b) => b.score - a.score || a.name.localeCompare(b.name))
    .map(({ score: _score, ...rest }) => rest);
}

/** The verified pass rate of `records`, drawn toward `prior` by PRIOR_RUNS runs' weight. */
function shrink(records: readonly OutcomeRecord[], prior: number): number {
  const passes = records.filter((record) => record.passed).length;
  return (passes + PRIOR_RUNS * prior) / (records.length + PRIOR_RUNS);
}

/** The mean cost of a run at the most specific level with records, drawn toward the prior. */
function expectedCost(levels: OutcomeRecord[][], priorCostUsd: number): number {
  const level = levels.find((records) => records.length > 0);
  if (!level) return priorCostUsd;
  const total = level.reduce((sum, record) => sum + record.costUsd, 0);
  return (total + priorCostUsd) / (level.length + 1);
}

function citedEvidence(
  cell: OutcomeRecord[],
  here: OutcomeRecord[],
  elsewhere: OutcomeRecord[],
  kind: string,
  work: WorkType,
): RankedProfile['evidence'] {
  const words = workWords(work).many;
  const [records, where] =
    cell.length > 0
      ? [cell, `${kindWords(kind)} ${words} in this project`]
      : here.length > 0
        ? [here, `${words} in this project`]
        : [elsewhere, `${words} elsewhere`];
  return {
    passed: records.filter((record) => record.passed).length,
    verified: records.length,
    costUsd: records.reduce((sum, record) => sum + record.costUsd, 0),
    where,
  };
}

function kindWords(kind: string): string {
  return kind.startsWith('agent:') ? `${kind.slice('agent:'.length)}-agent` : kind;
}

/**
 * The one line a result carries: `auto: qwen — 9 of 10 fix tasks passed in this project,
 * $0.0020 per pass (next: deepseek)`.
 */
export function routeReason(ranked: readonly RankedProfile[], work: WorkType): string {
  const [chosen, next] = ranked;
  if (!chosen) return 'auto: no candidate';
  const { evidence } = chosen;
  const words = workWords(work);
  const isElsewhere = evidence.where.endsWith('elsewhere');
  const record =
    evidence.verified === 0
      ? `no verified ${words.many} yet: exploring`
      : `${evidence.passed} of ${evidence.verified} ${evidence.where} ${words.pass}` +
        (evidence.passed > 0 ? `, ${formatUsd(evidence.costUsd / evidence.passed)} per pass` : '') +
        (isElsewhere
          ? '; nothing here yet: exploring'
          : evidence.verified < THIN_EVIDENCE
            ? '; still exploring'
            : '');
  return `auto: ${chosen.name} — ${record} (${next ? `next: ${next.name}` : 'the only candidate'})`;
}

/** Gamma(shape, 1) by Marsaglia and Tsang; shape < 1 through the boost. */
function sampleGamma(shape: number, random: () => number): number {
  if (shape < 1) return sampleGamma(shape + 1, random) * Math.pow(random() || 1e-12, 1 / shape);
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    let x: number;
    let v: number;
    do {
      x = normal(random);
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const u = random() || 1e-12;
    if (Math.log(u) < 0.5 * x * x + d - d * v + d * Math.log(v)) return d * v;
  }
}

function normal(random: () => number): number {
  const u = random() || 1e-12;
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}

export function sampleBeta(alpha: number, beta: number, random: () => number): number {
  const x = sampleGamma(alpha, random);
  const y = sampleGamma(beta, random);
  return x / (x + y);
}

/** A small seeded generator (mulberry32): the same seed, the same choices. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * `DELEGATE_ROUTING_SEED` makes choices repeatable (tests, the bench): the same seed and the
 * same record give the same draws, and each new record moves them on. Else a fresh seed.
 */
function routingRandom(env: AppContext['env'], records: number): () => number {
  const seed = Number(env.DELEGATE_ROUTING_SEED);
  if (!env.DELEGATE_ROUTING_SEED || !Number.isFinite(seed)) {
    return seededRandom(randomBytes(4).readUInt32LE(0));
  }
  return seededRandom(seed + records * 7_919);
}

export interface RouteChoice {
  /** Best first; the first is the pick. */
  ranked: RankedProfile[];
  reason: string;
}

export interface ChooseOptions {
  work: WorkType;
  kind: string;
  /** The tokens this call will send, when known (a one-shot's files). */
  inputTokens?: number;
  /** The run's own cap, when it has one: a candidate expected to cost more is left out. */
  budgetUsd?: number;
  /** Why a profile cannot run this work here (a CLI not installed), else undefined. */
  cannotRun?: (profile: ResolvedProfile) => string | undefined;
}

/** Chooses among the configured profiles for `auto`; says why in one line. */
export async function chooseProfile(
  options: ChooseOptions,
  context: AppContext,
  config: LoadedConfig = loadConfig(context.dataHome, context.projectDir, context.env),
): Promise<RouteChoice> {
  const profiles = await candidateProfiles(config, options, context);
  const left = budgetStatus(context.dataHome, config.budget).leftTodayUsd;
  const candidates: Candidate[] = [];
  const over: string[] = [];
  const prices = await Promise.all(profiles.map((profile) => runCost(profile, options)));
  const rank = priceRanks(prices);
  for (const [index, profile] of profiles.entries()) {
    const priorCostUsd = prices[index] ?? 0;
    const cap = Math.min(left ?? Infinity, options.budgetUsd ?? Infinity);
    if (priorCostUsd > cap) {
      over.push(`${profile.name} (about ${formatUsd(priorCostUsd)} a run)`);
      continue;
    }
    const mentions = profile.use ? useMentions(profile.use, options.kind) : false;
    candidates.push({
      name: profile.name,
      priorCostUsd,
      priorPass: Math.min(0.85, 0.35 + 0.3 * (rank[index] ?? 0) + (mentions ? 0.15 : 0)),
    });
  }
  if (candidates.length === 0) {
    throw new UserError(
      `auto: every candidate is expected to cost more than the budget left: ${over.join(', ')}. Raise budget_usd or the daily budget, or name a profile.`,
    );
  }
  const records = readOutcomes(context.dataHome);
  const ranked = rankProfiles({
    work: options.work,
    project: projectKey(context.projectDir),
    kind: options.kind,
    candidates,
    records,
    random: routingRandom(context.env, records.length),
  });
  return { ranked, reason: routeReason(ranked, options.work) };
}

/**
 * The profiles `auto` may choose from: `autoProfiles` when the user set it, else every profile
 * configured and approved — only the `local` ones when the default profile is `local` — that
 * can run this work here (its key present, a builtin engine for one-shots and explorations).
 */
async function candidateProfiles(
  config: LoadedConfig,
  options: ChooseOptions,
  context: AppContext,
): Promise<ResolvedProfile[]> {
  const names = config.autoProfiles ?? [...config.profiles.keys()];
  if (names.length === 0) {
    // No profile configured: the local server found on the usual ports is the only worker.
    return [await resolveProfile(config, undefined, context.env, context.discover)];
  }
  const defaultName = defaultProfileName(config);
  const isLocalOnly =
    config.autoProfiles === undefined &&
    defaultName !== undefined &&
    config.profiles.get(defaultName)?.local === true;
  const usable: ResolvedProfile[] = [];
  const refused: string[] = [];
  for (const name of names) {
    const configured = config.profiles.get(name);
    if (!configured) {
      refused.push(`${name}: not a configured, approved profile`);
      continue;
    }
    if (isLocalOnly && !configured.local) continue;
    try {
      const profile = await resolveProfile(config, name, context.env, context.discover);
      const problem = whyNot(profile, options, context);
      if (problem) refused.push(`${name}: ${problem}`);
      else usable.push(profile);
    } catch (error) {
      refused.push(`${name}: ${errorMessage(error)}`);
    }
  }
  if (usable.length === 0) {
    throw new UserError(
      `auto: no profile can take this ${workWords(options.work).one}${isLocalOnly ? ' (your default profile is local, so only local profiles are candidates; list others in "autoProfiles" to allow them)' : ''}. ${refused.join('; ') || 'None is configured.'}`,
    );
  }
  return usable;
}

function whyNot(
  profile: ResolvedProfile,
  options: ChooseOptions,
  context: AppContext,
): string | undefined {
  if (isCliFormat(profile.format)) {
    if (options.work !== 'task') return `${profile.format} runs tasks only`;
    return options.cannotRun?.(profile);
  }
  try {
    if (profile.format !== 'copilot') endpointFor(profile, context.env);
  } catch (error) {
    return errorMessage(error);
  }
  return options.cannotRun?.(profile);
}

/** What a typical run costs at the profile's price (0 for local or an unknown price). */
async function runCost(profile: ResolvedProfile, options: ChooseOptions): Promise<number> {
  const price = await priceFor(profile).catch(() => undefined);
  if (!price) return 0;
  const typical = TYPICAL_TOKENS[options.work];
  return costOf(price, {
    inputTokens: options.inputTokens ?? typical.input,
    outputTokens: typical.output,
    cachedInputTokens: 0,
  });
}

/** Each price's rank from 0 (cheapest) to 1 (dearest); all 0.5 when they are equal. */
function priceRanks(prices: readonly number[]): number[] {
  const distinct = [...new Set(prices)].sort((a, b) => a - b);
  if (distinct.length < 2) return prices.map(() => 0.5);
  return prices.map((price) => distinct.indexOf(price) / (distinct.length - 1));
}

/**
 * The profile a call names — or, for `auto`, the one chosen for it, with the line that says
 * why. Every entry that takes a `profile` argument comes through here.
 */
export async function profileForCall(
  requested: string | undefined,
  options: ChooseOptions,
  context: AppContext,
  config: LoadedConfig = loadConfig(context.dataHome, context.projectDir, context.env),
): Promise<{ profile: ResolvedProfile; route?: RouteChoice }> {
  if (requested !== AUTO_PROFILE) {
    return { profile: await resolveProfile(config, requested, context.env, context.discover) };
  }
  const route = await chooseProfile(options, context, config);
  const name = route.ranked[0]!.name;
  const profile = await resolveProfile(
    config,
    config.profiles.has(name) ? name : undefined,
    context.env,
    context.discover,
  );
  return { profile, route };
}
