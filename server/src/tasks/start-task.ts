import { mkdirSync, realpathSync, rmSync } from 'node:fs';
import { posix } from 'node:path';
import { agentRootsFor, findAgent, requireAgent, type AgentDefinition } from '../agent/agents.ts';
import {
  DEFAULT_LIMITS,
  decideSandbox,
  sandboxForJob,
  type SandboxDecision,
  taskAllowHosts,
  withSandboxLease,
} from '../sandbox/index.ts';
import { turnBudget } from '../agent/turn-budget.ts';
import { workerEnv } from '../sandbox/worker-env.ts';
import { loadConfig, type LoadedConfig } from '../profiles/load-config.ts';
import { resolveProfile } from '../profiles/resolve-profile.ts';
import type { AppContext } from '../profiles/app-context.ts';
import { TaskError, UserError } from '../util/user-error.ts';
import {
  AUTO_PROFILE,
  isCliFormat,
  type AttemptStrategy,
  type SandboxMode,
} from '../config/config-rules.ts';
import { chooseProfile } from '../calls/choose-profile.ts';
import { taskKind } from '../calls/task-kind.ts';
import type { ResolvedProfile } from '../config/resolved-profile.ts';
import { cliEndpointHosts, cliEngineFor, findBinary, type CliEngine } from './engines/index.ts';
import {
  appendEvent,
  isTerminal,
  jobDir,
  listJobs,
  markStarted,
  readJob,
  releaseTaskId,
  reserveTaskId,
  updateJob,
  writeJob,
} from '../store/job-store.ts';
import { confineWorkdir } from './confine-workdir.ts';
import { finishTask } from './finish-task.ts';
import { spawnWorker } from './spawn-worker.ts';
import {
  serverHosts,
  spawnTaskHost,
  spawnWorkerNow,
  type HostKeeper,
  type TaskHost,
} from './task-host.ts';
import { pickReviewProfile } from './review.ts';
import { cannotRun, runTestCommand } from './verify.ts';
import { chooseIsolation, inPlace, makeWorktree, undoPlace } from './task-place.ts';
import { isGitRepository } from './worktree.ts';
import { attemptId, removeAttemptWorktree, settleAttempts } from './attempts.ts';
import { sessionOf, type JobFile, type RecordedRunner } from '../store/job-file.ts';
import { checkRunner, runnerAddress, runnerSandbox } from '../runners/check-runner.ts';
import { remoteTaskOf } from '../runners/remote-shell.ts';
import { plural } from '../util/plural.ts';

export interface StartTaskInput {
  task: string;
  agent?: string;
  profile?: string;
  workdir?: string;
  isolation?: 'worktree' | 'none';
  baseBranch?: string;
  testCommand?: string;
  definitionOfDone?: string;
  budgetUsd?: number;
  maxTurns?: number;
  timeoutS?: number;
  /** Hosts the task's sandboxed commands may reach, besides the profile's `allowHosts`. */
  allowHosts?: string[];
  /** Workers racing on the task, each in its own worktree (1–5; default 1). */
  attempts?: number;
  /** The profile of each attempt (default: the configured `tasks.attemptProfiles`, else `profile`). */
  attemptProfiles?: string[];
  attemptStrategy?: AttemptStrategy;
  /** Started as an MCP native task (see `JobSummary.nativeTask`). */
  nativeTask?: boolean;
  /** The runner (`runners.<name>` of the user's config) its commands run on; default: this machine. */
  runner?: string;
  /**
   * Profiles to climb, one after another, when a rung's work fails its verification (default:
   * the configured `tasks.escalate` for a verified task that names no profile).
   */
  escalate?: string[];
}

/** Rungs of a ladder `auto` builds from the scoreboard's order. */
const AUTO_RUNGS = 3;

/** At most this many attempts race on one task. */
export const MAX_ATTEMPTS = 5;

/** Attempts after the first failing test run, each with the failure's output. */
const DEFAULT_FIX_ROUNDS = 2;

export const TASK_DEFAULTS = {
  timeoutS: 1_800,
  idleTimeoutS: 300,
  questionTimeoutS: 600,
  preflightS: 120,
};

/**
 * Starts a task: checks the profile and agent, makes the worktree, runs the test command once
 * before any token is spent (preflight), then spawns the detached worker process and returns.
 */
export function startTask(input: StartTaskInput, context: AppContext): Promise<JobFile> {
  // The sandbox is checked, and runs the preflight, only while a start is in flight.
  return withSandboxLease(() => startTaskNow(input, context));
}

async function startTaskNow(input: StartTaskInput, context: AppContext): Promise<JobFile> {
  const config = loadConfig(context.dataHome, context.projectDir, context.env);
  const route = await routeTask(input, config, context);
  if (route.profiles.length > 1) return startAttempts(input, route, config, context);
  const project = realpathSync(context.projectDir);
  // The task's host loads (or is loaded: the server's) while the task is planned (the first
  // start checks the OS sandbox) and its place made; the task runs there once it is ready.
  const keeper = hostKeeperOf(context);
  const id = reserveTaskId(context.dataHome);
  let host: TaskHost | undefined;
  // A host of this start's own goes once its task has ended (or at once, when it got none);
  // the server's goes when this start failed and it has run nothing yet.
  const letGo = () => {
    if (!host) return;
    if (keeper) keeper.release(host);
    else host.close();
  };
  let place: Awaited<ReturnType<typeof makeWorktree | typeof inPlace>> | undefined;
  let job: JobFile;
  try {
    host = keeper ? keeper.take(context) : spawnTaskHost(context);
    const plan = await planTask({ ...input, ...profileOf(route.profiles[0]) }, config, context);
    const workdir = confineWorkdir(project, input.workdir ?? '.');
    const isolation = await chooseIsolation(input.isolation, workdir, plan.runner !== undefined);
    if (plan.cliEngine && isolation === 'none') refuseBusyCheckout(context.dataHome, workdir);
    place =
      isolation === 'worktree'
        ? await makeWorktree(id, workdir, input.baseBranch, context.dataHome)
        : await inPlace(workdir, jobDir(context.dataHome, id), context.dataHome);
    job = {
      ...queuedJob(input, config, plan, { id, project, isolation, ...place }, context),
      ...(route.reason ? { route: route.reason } : {}),
    };
    await writeJob(context.dataHome, job);
    markStarted(context.dataHome, id);
    appendEvent(context.dataHome, id, 'state', `queued in ${job.workdir}`);
    const { sandbox } = plan;
    appendEvent(context.dataHome, id, 'sandbox', sandbox.sandboxed ? 'on' : `off: ${sandbox.note}`);
    if (job.testCommand && !(await preflightPasses(job, job.testCommand, context))) {
      letGo();
      return readJob(context.dataHome, id);
    }
  } catch (error) {
    letGo();
    // A start refused or failed half-way leaves nothing: no job folder, worktree or branch.
    await undoPlace(context.dataHome, place).catch(() => undefined);
    releaseTaskId(context.dataHome, id);
    throw error;
  }
  try {
    return host ? await host.run(job) : await spawnWorker(job, context);
  } finally {
    letGo();
  }
}

/** The server's host keeper: a long-lived server keeps one host for all its tasks. */
function hostKeeperOf(context: AppContext): HostKeeper | undefined {
  return context.keepsTaskHost ? serverHosts() : undefined;
}

function profileOf(profile: string | undefined): { profile?: string } {
  return profile === undefined ? {} : { profile };
}

/**
 * Which profiles a task runs on, and how: one; several racing (`attempts`); or a ladder climbed
 * one rung at a time when the work fails its verification (`escalate`, else the configured
 * `tasks.escalate` for a verified task that names no profile). `auto` — as the profile or as an
 * entry of `attempt_profiles` — takes the scoreboard's order: the best for one, the K best for
 * K attempts, and for a verified task a ladder of the first AUTO_RUNGS.
 */
async function routeTask(
  input: StartTaskInput,
  config: LoadedConfig,
  context: AppContext,
): Promise<{ profiles: Array<string | undefined>; ladder: boolean; reason?: string }> {
  const isVerified = Boolean(input.testCommand || input.definitionOfDone);
  if (input.escalate) {
    if (!isVerified) {
      throw new UserError(
        "escalate climbs to the next profile when a rung's work fails its verification: pass test_command or definition_of_done too.",
      );
    }
    if ((input.attempts ?? 1) > 1 || input.attemptProfiles || input.attemptStrategy) {
      throw new UserError(
        'Pass escalate (one rung after another) or attempts (racing, with attempt_profiles and attempt_strategy), not both.',
      );
    }
    if (input.profile !== undefined && input.profile !== AUTO_PROFILE) {
      throw new UserError(
        'Pass profile or escalate, not both: the ladder starts on the first profile of escalate.',
      );
    }
    if (input.escalate.length < 2 || input.escalate.length > MAX_ATTEMPTS) {
      throw new UserError(`escalate must name 2 to ${MAX_ATTEMPTS} profiles, cheapest first.`);
    }
    return { profiles: input.escalate, ladder: true };
  }
  const isAuto =
    input.profile === AUTO_PROFILE || input.attemptProfiles?.includes(AUTO_PROFILE) === true;
  if (!isAuto) {
    const configured = config.tasks.escalate;
    const isDefault =
      input.profile === undefined &&
      input.attempts === undefined &&
      input.attemptProfiles === undefined &&
      input.agent === undefined;
    if (configured && isDefault && isVerified) return { profiles: configured, ladder: true };
    return { profiles: attemptProfilesOf(input, config), ladder: false };
  }
  const choice = await chooseProfile(
    {
      work: 'task',
      kind: taskKind(input.task, input.agent),
      ...taskBudget(input.budgetUsd, config.budget.perTaskUsd),
      cannotRun: (profile) => cannotRunHere(profile, input, context),
    },
    context,
  );
  const best = choice.ranked.map((ranked) => ranked.name);
  if (input.attemptProfiles) {
    const named = new Set(input.attemptProfiles);
    const spare = best.filter((name) => !named.has(name));
    let next = 0;
    const attemptProfiles = input.attemptProfiles.map((name) =>
      name === AUTO_PROFILE ? (spare[next++ % Math.max(1, spare.length)] ?? best[0]!) : name,
    );
    return {
      profiles: attemptProfilesOf({ ...input, attemptProfiles }, config),
      ladder: false,
      reason: choice.reason,
    };
  }
  const count = input.attempts ?? 1;
  if (count > 1) {
    const profiles = attemptProfilesOf(
      {
        ...input,
        profile: undefined,
        attemptProfiles: Array.from({ length: count }, (_, index) => best[index % best.length]!),
      },
      config,
    );
    return { profiles, ladder: false, reason: choice.reason };
  }
  if (isVerified && best.length > 1 && (await canHoldLadder(input, context))) {
    const rungs = best.slice(0, AUTO_RUNGS);
    return {
      profiles: rungs,
      ladder: true,
      reason: `${choice.reason}; if its work fails, climbs ${rungs.join(' → ')}`,
    };
  }
  return { profiles: [best[0]], ladder: false, reason: choice.reason };
}

/** Whether the task's place can take a ladder: rungs each need a worktree of a git repository. */
async function canHoldLadder(input: StartTaskInput, context: AppContext): Promise<boolean> {
  if (input.isolation === 'none') return false;
  const workdir = confineWorkdir(realpathSync(context.projectDir), input.workdir ?? '.');
  return isGitRepository(workdir);
}

/** Why a profile cannot take this task here (its CLI missing, a CLI on a runner). */
function cannotRunHere(
  profile: ResolvedProfile,
  input: StartTaskInput,
  context: AppContext,
): string | undefined {
  if (!isCliFormat(profile.format)) return undefined;
  if (input.runner !== undefined) return 'a CLI engine does not run on a runner';
  try {
    findBinary(cliEngineFor(profile.format), context.env.PATH);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/**
 * The profile of each attempt: `attempt_profiles` (one per attempt), else the configured
 * `tasks.attemptProfiles` (cycled through), else the task's profile for every attempt. One
 * entry (possibly undefined: the default profile) for a task of one attempt.
 */
function attemptProfilesOf(input: StartTaskInput, config: LoadedConfig): Array<string | undefined> {
  const given = input.attemptProfiles;
  const count = input.attempts ?? given?.length ?? 1;
  if (!Number.isInteger(count) || count < 1 || count > MAX_ATTEMPTS) {
    throw new UserError(`attempts must be a whole number from 1 to ${MAX_ATTEMPTS}, got ${count}.`);
  }
  if (given) {
    if (given.length !== count) {
      throw new UserError(
        `attempt_profiles names ${plural(given.length, 'profile')} for ${plural(count, 'attempt')}; give one per attempt, or leave attempts out.`,
      );
    }
    if (input.profile !== undefined) {
      throw new UserError('Pass profile or attempt_profiles, not both.');
    }
    return given;
  }
  const configured = input.profile === undefined ? config.tasks.attemptProfiles : undefined;
  return Array.from({ length: count }, (_, index) =>
    configured && count > 1 ? configured[index % configured.length] : input.profile,
  );
}

/**
 * Starts a task as several attempts racing in their own worktrees (see attempts.ts): each is
 * checked, placed and queued before any runs; the test command's preflight runs once; then
 * every attempt's worker starts. A refused start leaves nothing behind.
 */
async function startAttempts(
  input: StartTaskInput,
  route: { profiles: Array<string | undefined>; ladder: boolean; reason?: string },
  config: LoadedConfig,
  context: AppContext,
): Promise<JobFile> {
  const { profiles, ladder } = route;
  if (!input.testCommand && !input.definitionOfDone) {
    throw new UserError(
      'Several attempts need a way to pick the winner: pass test_command (the first attempt whose tests pass wins), definition_of_done (a reviewer grades each), or both.',
    );
  }
  const plans: TaskPlan[] = [];
  for (const profile of profiles) {
    plans.push(await planTask({ ...input, ...profileOf(profile) }, config, context));
  }
  const project = realpathSync(context.projectDir);
  const workdir = confineWorkdir(project, input.workdir ?? '.');
  if (input.isolation === 'none' || !(await isGitRepository(workdir))) {
    throw new UserError(
      `${ladder ? "A ladder's rungs" : 'Several attempts'} each need a worktree of their own: run them in a git repository, without isolation "none".`,
    );
  }
  const id = reserveTaskId(context.dataHome);
  // One budget for the task: each racing attempt may spend its share, so together they stay
  // within it; a rung may spend what the rungs before it left (set as it is climbed).
  const share = taskBudget(input.budgetUsd, config.budget.perTaskUsd).budgetUsd;
  const perAttempt =
    share === undefined ? {} : { budgetUsd: ladder ? share : share / plans.length };
  const attempts: JobFile[] = [];
  try {
    for (const [index, plan] of plans.entries()) {
      const attemptIdOf = attemptId(id, index + 1);
      // The task's id is reserved: its attempts' ids (`<id>a<n>`) are no other task's.
      mkdirSync(jobDir(context.dataHome, attemptIdOf), { recursive: true });
      const place = await makeWorktree(attemptIdOf, workdir, input.baseBranch, context.dataHome);
      const placed = { id: attemptIdOf, project, isolation: 'worktree' as const, ...place };
      const job: JobFile = {
        ...queuedJob(input, config, plan, placed, context),
        attemptOf: id,
        ...perAttempt,
        ...(ladder ? { rung: index + 1 } : {}),
      };
      attempts.push(job);
      await writeJob(context.dataHome, job);
    }
  } catch (error) {
    await removeAttempts(context.dataHome, attempts);
    for (const index of plans.keys()) {
      rmSync(jobDir(context.dataHome, attemptId(id, index + 1)), { recursive: true, force: true });
    }
    releaseTaskId(context.dataHome, id);
    throw error;
  }
  const first = attempts[0]!;
  const task: JobFile = {
    ...queuedJob(
      input,
      config,
      plans[0]!,
      { id, project, isolation: 'worktree', workdir },
      context,
    ),
    ...(share === undefined ? {} : { budgetUsd: share }),
    attempts: attempts.map((attempt, index) => ({
      id: attempt.id,
      profile: plans[index]!.profile.name,
    })),
    attemptStrategy: ladder
      ? 'ladder'
      : (input.attemptStrategy ??
        config.tasks.attemptStrategy ??
        (input.testCommand ? 'first_pass' : 'best_review')),
    ...(route.reason ? { route: route.reason } : {}),
  };
  // The task runs on no profile or engine of its own; it is unsandboxed when any attempt is.
  delete task.profile;
  delete task.engine;
  const unsandboxed = plans.find((plan) => !plan.sandbox.sandboxed);
  task.sandboxed = unsandboxed === undefined;
  if (unsandboxed?.sandbox.note) task.sandboxNote = unsandboxed.sandbox.note;
  await writeJob(context.dataHome, task);
  markStarted(context.dataHome, id);
  appendEvent(
    context.dataHome,
    id,
    'state',
    ladder
      ? `queued as a ladder of ${attempts.length} rungs: ${task.attempts!.map((ref) => `${ref.id} ${ref.profile}`).join(' → ')}`
      : `queued as ${plural(attempts.length, 'attempt')} (${task.attemptStrategy}): ${task.attempts!.map((ref) => `${ref.id} ${ref.profile}`).join(', ')}`,
  );
  for (const [index, attempt] of attempts.entries()) {
    appendEvent(
      context.dataHome,
      attempt.id,
      'state',
      `queued in ${attempt.workdir}, attempt of ${id}`,
    );
    const { sandbox } = plans[index]!;
    appendEvent(
      context.dataHome,
      attempt.id,
      'sandbox',
      sandbox.sandboxed ? 'on' : `off: ${sandbox.note}`,
    );
  }
  if (input.testCommand && !(await preflightPasses(first, input.testCommand, context))) {
    const { preflight, error } = readJob(context.dataHome, first.id);
    for (const attempt of attempts.slice(1)) {
      await updateJob(context.dataHome, attempt.id, () => (preflight ? { preflight } : undefined));
      await finishTask(context.dataHome, attempt.id, {
        state: 'failed',
        ...(error ? { error } : {}),
      });
    }
    await updateJob(context.dataHome, id, () => (preflight ? { preflight } : undefined));
    await settleAttempts(context.dataHome, id);
    return readJob(context.dataHome, id);
  }
  const { preflight } = readJob(context.dataHome, first.id);
  for (const attempt of attempts) {
    if (preflight && attempt !== first) {
      await updateJob(context.dataHome, attempt.id, () => ({ preflight }));
    }
    // A ladder starts on its first rung; the next starts when one fails (attempts.ts).
    if (!ladder || attempt === first) await spawnWorkerNow(attempt, context, hostKeeperOf(context));
  }
  if (preflight) await updateJob(context.dataHome, id, () => ({ preflight }));
  return readJob(context.dataHome, id);
}

/** The worktrees and folders of attempts made before a start was refused. */
async function removeAttempts(dataHome: string, attempts: JobFile[]): Promise<void> {
  for (const attempt of attempts) {
    await removeAttemptWorktree(dataHome, attempt).catch(() => undefined);
    rmSync(jobDir(dataHome, attempt.id), { recursive: true, force: true });
  }
}

/** What the task runs as: its profile, agent, reviewer, CLI engine, hosts and sandbox. */
interface TaskPlan {
  profile: ResolvedProfile;
  agent: AgentDefinition | undefined;
  reviewProfile: string | undefined;
  cliEngine: CliEngine | undefined;
  allowHosts: string[];
  sandbox: SandboxDecision;
  /** The runner its commands run on, checked (reachable, host key known, git, workdir). */
  runner?: Omit<RecordedRunner, 'taskDir'>;
}

/** Checks the profile, agent and engine before anything is made. */
async function planTask(
  input: StartTaskInput,
  config: LoadedConfig,
  context: AppContext,
): Promise<TaskPlan> {
  const agent = input.agent ? lookupAgent(input.agent, context) : undefined;
  const profile = await resolveProfile(
    config,
    input.profile ?? agent?.profile,
    context.env,
    context.discover,
  );
  const reviewProfile = input.definitionOfDone
    ? pickReviewProfile(
        config,
        profile,
        findAgent('reviewer', agentRootsFor(context.projectDir, context.env, context.pluginRoot))
          ?.profile,
      )
    : undefined;
  // A CLI engine must be installed before any worktree is made.
  const cliEngine = isCliFormat(profile.format) ? cliEngineFor(profile.format) : undefined;
  if (cliEngine && input.runner !== undefined) {
    throw new UserError(
      `runner: profile "${profile.name}" runs ${profile.format}, a CLI that runs on this machine; runners take the builtin worker's commands. Use a builtin-engine profile (openai, anthropic, copilot) on a runner.`,
    );
  }
  if (cliEngine) findBinary(cliEngine, context.env.PATH);
  // A CLI runs in the sandbox with its model calls: its endpoint is one of the task's hosts.
  const allowHosts = taskAllowHosts(
    profile.allowHosts,
    input.allowHosts,
    cliEngine ? cliEndpointHosts(cliEngine, profile) : undefined,
  );
  if (input.runner !== undefined) {
    const runner = await planRunner(input.runner, config, context, allowHosts);
    return {
      profile,
      agent,
      reviewProfile,
      cliEngine,
      allowHosts,
      sandbox: runner.sandbox,
      runner: runner.recorded,
    };
  }
  const sandbox = await decideTaskSandbox(
    config.sandbox ?? 'auto',
    context,
    cliEngine?.sandboxConflict?.(profile),
  );
  return { profile, agent, reviewProfile, cliEngine, allowHosts, sandbox };
}

/**
 * The named runner, checked before anything is made: a runner that is not configured, cannot
 * be reached, whose host key is unknown or changed, or that lacks git or a writable workdir
 * refuses the task with what to do.
 */
async function planRunner(
  name: string,
  config: LoadedConfig,
  context: AppContext,
  allowHosts: readonly string[],
): Promise<{ recorded: Omit<RecordedRunner, 'taskDir'>; sandbox: SandboxDecision }> {
  const configured = config.runners?.get(name);
  if (!configured) {
    const names = [...(config.runners?.keys() ?? [])];
    throw new UserError(
      `runner: no runner "${name}". ${names.length ? `Runners: ${names.join(', ')}.` : 'None is configured.'} A runner is defined under "runners" in ${config.configFile} (only there: a project file may not define one); see the README's "Runners".`,
    );
  }
  const address = runnerAddress(name, configured);
  const facts = await checkRunner(address, context);
  if (facts.problem) throw new UserError(facts.problem);
  const decided = runnerSandbox(name, facts, config.sandbox ?? 'auto');
  const noNetwork =
    decided.sandboxed && allowHosts.length > 0
      ? `commands on runner "${name}" have no network in its sandbox; allow_hosts (${allowHosts.join(', ')}) is not applied there`
      : undefined;
  const note = [decided.note, noNetwork].filter(Boolean).join('; ');
  return {
    recorded: {
      ...address,
      sandboxed: decided.sandboxed,
      shell: facts.shell ?? 'sh',
      ...(configured.maxTasks ? { maxTasks: configured.maxTasks } : {}),
    },
    sandbox: { sandboxed: decided.sandboxed, ...(note ? { note } : {}) },
  };
}

/** The task's job.json as it is queued. */
function queuedJob(
  input: StartTaskInput,
  config: LoadedConfig,
  plan: TaskPlan,
  placed: Pick<JobFile, 'id' | 'project' | 'isolation'> & Awaited<ReturnType<typeof inPlace>>,
  context: AppContext,
): JobFile {
  const { profile, agent, cliEngine, sandbox, allowHosts, reviewProfile, runner } = plan;
  const { id, project, ...where } = placed;
  const now = new Date().toISOString();
  const session = sessionOf(context.env);
  return {
    id,
    project,
    state: 'queued',
    task: input.task,
    ...(input.nativeTask ? { nativeTask: true } : {}),
    ...(session ? { session } : {}),
    createdAt: now,
    updatedAt: now,
    lastEventAt: now,
    profile: profile.name,
    ...(profile.discovered ? { discovered: profile.discovered } : {}),
    ...(cliEngine ? { engine: cliEngine.format } : {}),
    ...(agent ? { agent: { name: agent.name, tier: agent.tier, path: agent.path } } : {}),
    ...where,
    ...(runner ? { runner: { ...runner, taskDir: posix.join(runner.workdir, id) } } : {}),
    sandboxed: sandbox.sandboxed,
    ...(sandbox.note ? { sandboxNote: sandbox.note } : {}),
    ...(sandbox.onRecord ? { sandboxOnRecord: true } : {}),
    ...(allowHosts.length > 0 ? { allowHosts } : {}),
    limits: {
      processes: config.tasks.maxProcesses ?? DEFAULT_LIMITS.processes,
      memoryMb: config.tasks.maxMemoryMb ?? DEFAULT_LIMITS.memoryMb,
    },
    ...(input.testCommand
      ? { testCommand: input.testCommand, fixRounds: config.tasks.fixRounds ?? DEFAULT_FIX_ROUNDS }
      : {}),
    ...(input.definitionOfDone ? { definitionOfDone: input.definitionOfDone } : {}),
    ...(reviewProfile ? { reviewProfile } : {}),
    ...taskBudget(input.budgetUsd, config.budget.perTaskUsd),
    maxTurns: turnBudget(input.maxTurns ?? agent?.maxTurns, profile),
    timeoutS: input.timeoutS ?? TASK_DEFAULTS.timeoutS,
    // Past the profile's own idle limit, so a silent endpoint is reported by name first.
    idleTimeoutS: Math.max(
      TASK_DEFAULTS.idleTimeoutS,
      (profile.idleTimeoutS ?? TASK_DEFAULTS.idleTimeoutS) + 60,
    ),
    questionTimeoutS:
      Number(context.env.DELEGATE_QUESTION_TIMEOUT_S) || TASK_DEFAULTS.questionTimeoutS,
    step: 0,
    costUsd: 0,
    filesTouched: [],
  };
}

/** The test command once before any token is spent; a runner that cannot run fails the task. */
async function preflightPasses(
  job: JobFile,
  testCommand: string,
  context: AppContext,
): Promise<boolean> {
  const remote = remoteTaskOf(job, context.dataHome, context.env);
  let preflight;
  try {
    preflight = await runTestCommand(
      testCommand,
      job.workdir,
      workerEnv(context.env),
      TASK_DEFAULTS.preflightS * 1000,
      remote ? undefined : await sandboxForJob(job, context.dataHome, context.env),
      remote,
    );
  } catch (error) {
    // Its runner went, or refused, between the check and the preflight: the task ends so.
    if (!(error instanceof TaskError)) throw error;
    await finishTask(context.dataHome, job.id, {
      state: error.taskState,
      error: `preflight: ${error.message}`,
    });
    return false;
  }
  await updateJob(context.dataHome, job.id, () => ({ preflight }));
  const missing = cannotRun(preflight);
  if (missing === undefined) return true;
  await finishTask(context.dataHome, job.id, {
    state: 'failed',
    error: `preflight: the test command cannot run (exit ${preflight.exitCode ?? 'none'}): ${missing}. No model was called. Fix test_command or add what is missing, then start again; a task meant to create it starts without test_command`,
  });
  return false;
}

/**
 * The task's sandbox; a CLI that cannot run as its profile asks inside it (`conflict`) runs
 * unsandboxed under `auto`, and is refused under `required` before anything is made.
 */
async function decideTaskSandbox(
  mode: SandboxMode,
  context: AppContext,
  conflict: string | undefined,
): Promise<SandboxDecision> {
  if (conflict === undefined || mode === 'off') {
    return decideSandbox(mode, context.env, context.dataHome, {
      isLongLived: context.keepsTaskHost === true,
    });
  }
  if (mode === 'required') {
    throw new UserError(
      `sandbox is "required", but ${conflict}. Give the profile another sandboxMode, use a builtin-engine profile, or set "sandbox": "auto" to run it unsandboxed (it says so).`,
    );
  }
  return { sandboxed: false, note: conflict };
}

/** One task at a time in a checkout: a CLI task working in place waits for none, it is refused. */
function refuseBusyCheckout(dataHome: string, workdir: string): void {
  const busy = listJobs(dataHome).find((job) => !isTerminal(job.state) && job.workdir === workdir);
  if (busy) {
    throw new UserError(
      `Task ${busy.id} is already working in ${workdir} (${busy.state}). One task per checkout: wait for it, cancel it, or use isolation "worktree".`,
    );
  }
}

/**
 * The task's whole-run cap: what the supervisor asked, never above the user's configured
 * `perTaskUsd` (a supervisor cannot lift the user's cap), else that configured cap.
 */
function taskBudget(asked: number | undefined, configured: number | undefined) {
  const capUsd = asked === undefined ? configured : Math.min(asked, configured ?? asked);
  return capUsd === undefined ? {} : { budgetUsd: capUsd };
}

function lookupAgent(name: string, context: AppContext): AgentDefinition {
  return requireAgent(name, agentRootsFor(context.projectDir, context.env, context.pluginRoot));
}
