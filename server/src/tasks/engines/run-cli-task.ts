import { mkdirSync, readFileSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import { sandboxForJob } from '../../sandbox/index.ts';
import { workerEnv } from '../../agent/worker-tools/index.ts';
import { loadConfig } from '../../profiles/load-config.ts';
import { slotsDir } from '../../config/paths.ts';
import { knownSecrets } from '../../profiles/known-secrets.ts';
import { endpointFor } from '../../profiles/profile-endpoint.ts';
import { resolveProfile } from '../../profiles/resolve-profile.ts';
import { isCliFormat } from '../../config/schema.ts';
import { acquireSlot, type PoolSlot } from '../../calls/pool.ts';
import { poolKeyOf, poolSizeOf } from '../../calls/pool-key.ts';
import type { AppContext } from '../../profiles/app-context.ts';
import { secretRedactor } from '../../util/secret-redactor.ts';
import { appendEvent, jobDir } from '../../store/job-store.ts';
import { TASK_ID_VARIABLE } from '../reconcile.ts';
import { createTaskFixRounds } from '../fix-rounds.ts';
import type { CliEvent, CliFailure } from './cli-engine.ts';
import { recordRun } from './cli-run-ledger.ts';
import { cliSandboxPaths } from './cli-sandbox.ts';
import { DEFAULT_COOLDOWN_S, startCooldown, waitForStartTurn } from './cooldown.ts';
import { findBinary } from './find-binary.ts';
import { cliEngineFor } from './registry.ts';
import { runCliEngine } from './run-cli-engine.ts';
import type { JobFile, VerificationFacts } from '../../store/job-file.ts';

/** CLI runs at once in one project. */
const PROJECT_CAP = 2;

/** A CLI task that ended badly, with the task state it ends in. */
export class CliTaskError extends Error {
  constructor(
    message: string,
    readonly taskState: 'failed' | 'timeout',
  ) {
    super(message);
  }
}

export interface CliTaskHooks {
  /** Records the task's activity (and step) in job.json. */
  recordActivity(activity: string, step?: number): void;
  /** Applies a change to the job (cost, files, child process groups). */
  updateJob(change: (job: JobFile) => Partial<JobFile> | undefined): void;
}

export interface CliTaskOutcome {
  summary: string;
  verification?: VerificationFacts;
  /** Test runs that failed and went back to the CLI before the final one. */
  failedAttempts?: VerificationFacts[];
}

/**
 * A task run by a vendor CLI: waits for its turn (caps, cooldown, stagger), runs the CLI in the
 * task's directory with its events mapped to progress, then verifies like the builtin engine.
 */
export async function runCliTask(
  job: JobFile,
  context: AppContext,
  signal: AbortSignal,
  hooks: CliTaskHooks,
): Promise<CliTaskOutcome> {
  const { dataHome, env } = context;
  const config = loadConfig(dataHome, job.project, env);
  const profile = await resolveProfile(config, job.profile, env);
  if (!isCliFormat(profile.format)) throw new Error(`profile ${profile.name} is not a CLI engine`);
  const engine = cliEngineFor(profile.format);
  const binary = findBinary(engine, env.PATH);
  const apiKey = profile.baseUrl ? endpointFor(profile, env).apiKey : undefined;
  const secrets = knownSecrets(dataHome, config.profiles.values(), env);
  const redactor = secretRedactor(apiKey ? [...secrets, apiKey] : secrets);
  const slots: PoolSlot[] = [];
  try {
    hooks.recordActivity(`waiting for a ${engine.format} slot`);
    slots.push(await takeSlot(dataHome, poolKeyOf(profile), poolSizeOf(profile), job, signal));
    slots.push(await takeSlot(dataHome, `cli-project:${job.project}`, PROJECT_CAP, job, signal));
    await waitForStartTurn(dataHome, engine.format, signal, (activity) =>
      hooks.recordActivity(activity),
    );
    const directory = jobDir(dataHome, job.id);
    const stateDir = join(directory, 'cli-state');
    mkdirSync(join(directory, 'tmp'), { recursive: true });
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    const paths = cliSandboxPaths(engine, profile, stateDir, env.HOME ?? '');
    // A task started sandboxed fails here rather than run its CLI unsandboxed.
    const sandbox = await sandboxForJob(job, dataHome, env, paths.readable, paths.writable);
    appendEvent(
      dataHome,
      job.id,
      'engine',
      `${engine.format}: ${binary}${sandbox ? ' (in the OS sandbox)' : ''}`,
    );
    let step = 0;
    /** What the finished runs cost, and what the current one has reported so far (absolute). */
    const cost = { before: 0, run: 0 };
    const onEvent = (event: CliEvent) => {
      if (event.isStep) step += 1;
      if (event.activity) {
        appendEvent(dataHome, job.id, 'step', `${step}: ${event.activity}`);
        hooks.recordActivity(event.activity, event.isStep ? step : undefined);
      }
      if (event.costUsd !== undefined) {
        cost.run = event.costUsd;
        hooks.updateJob(() => ({ costUsd: cost.before + cost.run }));
      }
      if (event.filesTouched?.length) {
        const paths = event.filesTouched.map((path) =>
          isAbsolute(path) ? relative(job.workdir, path) : path,
        );
        hooks.updateJob((current) => ({
          filesTouched: [...new Set([...current.filesTouched, ...paths])],
        }));
      }
    };
    const idleTimeoutS =
      Number(env.DELEGATE_CLI_IDLE_TIMEOUT_S) || profile.idleTimeoutS || job.idleTimeoutS;
    const loginHint = profile.baseUrl
      ? `the key of profile "${profile.name}" was refused by ${profile.baseUrl}: ${profile.apiKeyEnv ? `check $${profile.apiKeyEnv}, or ` : ''}store one with provider_key {"profile": "${profile.name}"}`
      : engine.loginHint;
    /** One run of the CLI with `prompt`, to its end; its final message, or the task's error. */
    const runOnce = async (prompt: string): Promise<string> => {
      const started = Date.now();
      cost.run = 0;
      try {
        const answer = await runCliOnce(prompt);
        await recordRun(dataHome, { job, profile, started, costUsd: cost.run });
        return answer;
      } catch (error) {
        await recordRun(dataHome, { job, profile, started, costUsd: cost.run, error });
        throw error;
      } finally {
        cost.before += cost.run;
      }
    };
    const runCliOnce = async (prompt: string): Promise<string> => {
      const invocation = engine.invocation({
        prompt,
        profile,
        ...(apiKey ? { apiKey } : {}),
        workdir: job.workdir,
        stateDir,
        userHome: env.HOME ?? '',
        isSandboxed: sandbox !== undefined,
      });
      const run = await runCliEngine({
        engine,
        binary,
        invocation,
        cwd: job.workdir,
        ...(sandbox ? { sandbox } : {}),
        baseEnv: workerEnv(env, {
          TMPDIR: join(directory, 'tmp'),
          [TASK_ID_VARIABLE]: job.id,
        }),
        idleTimeoutMs: idleTimeoutS * 1000,
        signal,
        onEvent,
        redact: (text) => redactor.text(text),
        onProcessGroup: (pgid, isRunning) =>
          hooks.updateJob((current) => ({
            childPgids: isRunning
              ? [...(current.childPgids ?? []), pgid]
              : (current.childPgids ?? []).filter((group) => group !== pgid),
          })),
      });
      signal.throwIfAborted();
      if (run.isIdleTimeout) {
        throw new CliTaskError(
          `idle timeout: ${engine.binary} printed nothing for ${idleTimeoutS} s and was killed with its processes`,
          'timeout',
        );
      }
      if (run.failure) await failWith(run.failure, engine.format, loginHint, dataHome, env);
      if (run.exitCode !== 0) {
        throw new CliTaskError(
          `infra: ${engine.binary} exited with code ${run.exitCode}${run.stderrTail ? `: ${run.stderrTail.slice(-500)}` : ''}`,
          'failed',
        );
      }
      const written = readFinalMessage(invocation.finalMessageFile);
      return written === undefined ? run.finalText : redactor.text(written);
    };
    const testCommand = job.testCommand;
    const fixRounds = testCommand
      ? createTaskFixRounds(
          { ...job, testCommand },
          {
            dataHome,
            env,
            ...(sandbox ? { sandbox } : {}),
            turnsPerRound: 0,
            signal,
            onActivity: (activity) => hooks.recordActivity(activity),
          },
        )
      : undefined;
    let summary = await runOnce(cliPrompt(job));
    // Fix until green: each failing test run goes to a new run of the CLI, with its output.
    for (let next = await fixRounds?.afterAnswer(); next; next = await fixRounds?.afterAnswer()) {
      appendEvent(dataHome, job.id, 'fix-round', `${fixRounds!.failedAttempts().length + 1}`);
      summary = await runOnce(
        `${cliPrompt(job)}\n\nYour previous attempt is in this directory.\n${next.message}`,
      );
    }
    const verification = await fixRounds?.finalFacts();
    const failedAttempts = fixRounds?.failedAttempts() ?? [];
    return {
      summary,
      ...(verification ? { verification } : {}),
      ...(failedAttempts.length ? { failedAttempts } : {}),
    };
  } finally {
    for (const slot of slots) await slot.release();
  }
}

/** The CLI's failure as the task's error, its kind first; a throttle starts the shared cooldown. */
async function failWith(
  failure: CliFailure,
  format: string,
  loginHint: string,
  dataHome: string,
  env: AppContext['env'],
): Promise<never> {
  if (failure.kind === 'throttle') {
    const seconds = Number(env.DELEGATE_CLI_COOLDOWN_S) || DEFAULT_COOLDOWN_S;
    await startCooldown(dataHome, format, seconds, failure.message);
    throw new CliTaskError(
      `throttle: ${failure.message} (every ${format} task now waits ${seconds} s before starting)`,
      'failed',
    );
  }
  if (failure.kind === 'auth_failed') {
    throw new CliTaskError(`auth_failed: ${failure.message} — ${loginHint}`, 'failed');
  }
  throw new CliTaskError(`${failure.kind}: ${failure.message}`, 'failed');
}

async function takeSlot(
  dataHome: string,
  poolKey: string,
  size: number,
  job: JobFile,
  signal: AbortSignal,
): Promise<PoolSlot> {
  const slot = await acquireSlot(slotsDir(dataHome), poolKey, size, {
    waitMs: job.timeoutS * 1000,
    signal,
    label: job.id,
  });
  if (!slot) throw new CliTaskError(`no ${poolKey} slot came free in time`, 'timeout');
  return slot;
}

function readFinalMessage(path: string | undefined): string | undefined {
  if (!path) return undefined;
  try {
    return readFileSync(path, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

function cliPrompt(job: JobFile): string {
  return [
    job.task,
    '',
    'You work alone in a disposable git worktree (your current directory); stay inside it.',
    'Never commit, push, merge or switch branches: the supervisor reviews and merges your work.',
    job.testCommand ? `The supervisor verifies your work with: ${job.testCommand}` : '',
    job.definitionOfDone ? `Definition of done: ${job.definitionOfDone}` : '',
    'End with a concise summary of what you changed (files), how you verified it, and anything left open.',
  ]
    .filter(Boolean)
    .join('\n');
}
