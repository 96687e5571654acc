/** One run of a task's CLI, to its end: progress, cost and its ledger line, its failure as the task's error. */
import { readFileSync } from 'node:fs';
import { cliIdleTimeout } from '../stop-messages.ts';
import { isAbsolute, relative } from 'node:path';
import type { ResolvedProfile } from '../../config/resolved-profile.ts';
import type { SandboxPolicy } from '../../sandbox/index.ts';
import type { SecretRedactor } from '../../util/secret-redactor.ts';
import { recordCliRun } from '../task-spending.ts';
import type { CliEngine, CliEvent, CliFailure } from './cli-engine.ts';
import { DEFAULT_COOLDOWN_S, startCooldown } from './cooldown.ts';
import { runCliEngine } from './run-cli-engine.ts';
import { TaskError } from '../../util/user-error.ts';
import { taskEnv, type EngineStart } from './task-engine.ts';

/** Where the task's CLI runs: its job folder, the CLI's private state folder, its sandbox. */
export interface CliRunPlace {
  directory: string;
  stateDir: string;
  sandbox?: SandboxPolicy;
}

export interface CliTaskRun extends EngineStart {
  cli: CliEngine;
  profile: ResolvedProfile;
  binary: string;
  apiKey?: string;
  redactor: SecretRedactor;
  place: CliRunPlace;
  /** Steps so far (across fix rounds), and the cost the current run has reported (absolute). */
  tally: { step: number; costRun: number };
}

/** One run of the CLI with `prompt`; its final message, or the task's error. Its cost gets a ledger line. */
export async function runCliOnce(run: CliTaskRun, prompt: string): Promise<string> {
  const started = Date.now();
  const { job, context, profile, tally } = run;
  tally.costRun = 0;
  try {
    const answer = await runToEnd(run, prompt);
    await recordCliRun(context.dataHome, { job, profile, started, costUsd: tally.costRun });
    return answer;
  } catch (error) {
    await recordCliRun(context.dataHome, { job, profile, started, costUsd: tally.costRun, error });
    throw error;
  }
}

async function runToEnd(run: CliTaskRun, prompt: string): Promise<string> {
  const { job, context, cli, profile, place, redactor, recorder, signal } = run;
  const { env } = context;
  const invocation = cli.invocation({
    prompt,
    profile,
    ...(run.apiKey ? { apiKey: run.apiKey } : {}),
    workdir: job.workdir,
    stateDir: place.stateDir,
    userHome: env.HOME ?? '',
    isSandboxed: place.sandbox !== undefined,
  });
  const idleTimeoutS =
    Number(env.DELEGATE_CLI_IDLE_TIMEOUT_S) || profile.idleTimeoutS || job.idleTimeoutS;
  const outcome = await runCliEngine({
    engine: cli,
    binary: run.binary,
    invocation,
    cwd: job.workdir,
    ...(place.sandbox ? { sandbox: place.sandbox } : {}),
    baseEnv: taskEnv(run, place.directory),
    idleTimeoutMs: idleTimeoutS * 1000,
    signal,
    onEvent: eventRecorder(run),
    redact: (text) => redactor.text(text),
    onProcessGroup: (pgid, isRunning) => recorder.childProcess(pgid, isRunning),
  });
  signal.throwIfAborted();
  if (outcome.isIdleTimeout) {
    throw new TaskError(cliIdleTimeout(cli.binary, idleTimeoutS, profile.name), 'timeout');
  }
  if (outcome.failure) await failWith(outcome.failure, run);
  if (outcome.exitCode !== 0) {
    throw new TaskError(
      `infra: ${cli.binary} exited with code ${outcome.exitCode}${outcome.stderrTail ? `: ${outcome.stderrTail.slice(-500)}` : ''}`,
      'failed',
    );
  }
  const written = readFinalMessage(invocation.finalMessageFile);
  return written === undefined ? outcome.finalText : redactor.text(written);
}

/** The CLI's events as the task's progress: steps, activity, cost, files touched. */
function eventRecorder(run: CliTaskRun): (event: CliEvent) => void {
  const { job, recorder, tally } = run;
  return (event) => {
    if (event.isStep) tally.step += 1;
    if (event.activity) {
      recorder.event('step', `${tally.step}: ${event.activity}`);
      recorder.activity(event.activity, event.isStep ? tally.step : undefined);
    }
    if (event.costUsd !== undefined) {
      // The CLI reports its run's cost so far: the task counts what it added.
      recorder.addCost(event.costUsd - tally.costRun);
      tally.costRun = event.costUsd;
    }
    if (event.filesTouched?.length) {
      recorder.filesTouched(
        event.filesTouched.map((path) => (isAbsolute(path) ? relative(job.workdir, path) : path)),
      );
    }
  };
}

/** The CLI's failure as the task's error, its kind first; a throttle starts the shared cooldown. */
async function failWith(failure: CliFailure, run: CliTaskRun): Promise<never> {
  const { cli, profile, context } = run;
  if (failure.kind === 'throttle') {
    const seconds = Number(context.env.DELEGATE_CLI_COOLDOWN_S) || DEFAULT_COOLDOWN_S;
    await startCooldown(context.dataHome, cli.format, seconds, failure.message);
    throw new TaskError(
      `throttle: ${failure.message} (every ${cli.format} task now waits ${seconds} s before starting)`,
      'failed',
    );
  }
  if (failure.kind === 'auth_failed') {
    const loginHint = profile.baseUrl
      ? `the key of profile "${profile.name}" was refused by ${profile.baseUrl}: ${profile.apiKeyEnv ? `check $${profile.apiKeyEnv}, or ` : ''}store one with provider_key {"profile": "${profile.name}"}`
      : cli.loginHint;
    throw new TaskError(`auth_failed: ${failure.message} — ${loginHint}`, 'failed');
  }
  throw new TaskError(`${failure.kind}: ${failure.message}`, 'failed');
}

function readFinalMessage(path: string | undefined): string | undefined {
  if (!path) return undefined;
  try {
    return readFileSync(path, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}
