/**
 * A vendor CLI as a task engine: waits for its turn (caps, cooldown, stagger), runs the CLI in
 * the task's directory with its events mapped to progress; each fix round is a new run.
 */
import { mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkerToolContext } from '../../agent/worker-tools/index.ts';
import { poolKeyOf, poolSizeOf } from '../../calls/pool-key.ts';
import type { PoolSlot } from '../../calls/pool.ts';
import { isCliFormat } from '../../config/config-rules.ts';
import type { ResolvedProfile } from '../../config/resolved-profile.ts';
import { knownSecrets } from '../../profiles/known-secrets.ts';
import { everyProfile, readConfigLazily } from '../../profiles/read-config.ts';
import { endpointFor } from '../../profiles/profile-endpoint.ts';
import { resolveProfile } from '../../profiles/resolve-profile.ts';
import { sandboxForJob, type SandboxPolicy } from '../../sandbox/index.ts';
import { jobDir } from '../../store/job-store.ts';
import type { JobFile } from '../../store/job-file.ts';
import { secretRedactor } from '../../util/secret-redactor.ts';
import { takeTaskSlot } from '../task-spending.ts';
import type { CliEngine } from './cli-engine.ts';
import { runCliOnce, type CliRunPlace } from './cli-run.ts';
import { cliSandboxPaths } from './cli-sandbox.ts';
import { waitForStartTurn } from './cooldown.ts';
import { findBinary } from './find-binary.ts';
import { taskEnv, type EngineStart, type EngineSession, type TaskEngine } from './task-engine.ts';

/** CLI runs at once in one project. */
const PROJECT_CAP = 2;

/** A CLI's task engine, with the CLI's own description (`cli`) for checks at task start. */
export interface CliTaskEngine extends TaskEngine {
  cli: CliEngine;
}

/** The task engine of one vendor CLI: all an engine file adds is its `CliEngine`. */
export function cliTaskEngine(cli: CliEngine): CliTaskEngine {
  return { cli, start: (input) => startCli(cli, input) };
}

async function startCli(cli: CliEngine, input: EngineStart): Promise<EngineSession> {
  const { job, context, recorder } = input;
  const { dataHome, env } = context;
  const config = await readConfigLazily(dataHome, job.project, env);
  const profile = await resolveProfile(config, job.profile, env);
  if (!isCliFormat(profile.format)) throw new Error(`profile ${profile.name} is not a CLI engine`);
  const binary = findBinary(cli, env.PATH);
  const apiKey = profile.baseUrl ? endpointFor(profile, env).apiKey : undefined;
  const secrets = knownSecrets(dataHome, everyProfile(config), env);
  const redactor = secretRedactor(apiKey ? [...secrets, apiKey] : secrets);
  const slots = await takeSlots(cli, profile, input);
  try {
    const place = await prepareRun(cli, profile, input);
    recorder.event(
      'engine',
      `${cli.format}: ${binary}${place.sandbox ? ' (in the OS sandbox)' : ''}`,
    );
    const run = {
      ...input,
      cli,
      profile,
      binary,
      redactor,
      place,
      ...(apiKey ? { apiKey } : {}),
      tally: { step: 0, costRun: 0 },
    };
    const runWith = (prompt: string) => runCliOnce(run, prompt);
    return {
      ...(place.sandbox ? { sandbox: place.sandbox } : {}),
      turnsPerFixRound: 0,
      reviewTools: reviewToolContext(input, place),
      run: () => runWith(cliPrompt(job)),
      retry: (message) =>
        runWith(`${cliPrompt(job)}\n\nYour previous attempt is in this directory.\n${message}`),
      close: () => releaseAll(slots),
    };
  } catch (error) {
    await releaseAll(slots);
    throw error;
  }
}

/** The CLI's pool slot, then the project's; released again when the second never comes. */
async function takeSlots(
  cli: CliEngine,
  profile: ResolvedProfile,
  { job, context, signal, recorder }: EngineStart,
): Promise<PoolSlot[]> {
  const slots: PoolSlot[] = [];
  try {
    recorder.activity(`waiting for a ${cli.format} slot`);
    const { dataHome } = context;
    slots.push(await takeTaskSlot(dataHome, poolKeyOf(profile), poolSizeOf(profile), job, signal));
    slots.push(
      await takeTaskSlot(dataHome, `cli-project:${job.project}`, PROJECT_CAP, job, signal),
    );
    await waitForStartTurn(dataHome, cli.format, signal, (activity) => recorder.activity(activity));
    return slots;
  } catch (error) {
    await releaseAll(slots);
    throw error;
  }
}

/** The task's folders for the CLI's state and temp files, and its sandbox. */
async function prepareRun(
  cli: CliEngine,
  profile: ResolvedProfile,
  { job, context }: EngineStart,
): Promise<CliRunPlace> {
  const { dataHome, env } = context;
  const directory = jobDir(dataHome, job.id);
  const stateDir = join(directory, 'cli-state');
  mkdirSync(join(directory, 'tmp'), { recursive: true });
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const paths = cliSandboxPaths(cli, profile, stateDir, env.HOME ?? '');
  // A task started sandboxed fails here rather than run its CLI unsandboxed.
  const sandbox: SandboxPolicy | undefined = await sandboxForJob(
    job,
    dataHome,
    env,
    paths.readable,
    paths.writable,
  );
  return { directory, stateDir, ...(sandbox ? { sandbox } : {}) };
}

/** What the reviewer reads the CLI's work through: the task's directory, in its sandbox. */
function reviewToolContext(start: EngineStart, place: CliRunPlace): WorkerToolContext {
  const { job, signal, recorder } = start;
  return {
    root: realpathSync(job.workdir),
    env: taskEnv(start, place.directory),
    signal,
    ...(place.sandbox ? { sandbox: place.sandbox } : {}),
    onChildProcess: (pgid, running) => recorder.childProcess(pgid, running),
  };
}

async function releaseAll(slots: PoolSlot[]): Promise<void> {
  for (const slot of slots) await slot.release();
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
