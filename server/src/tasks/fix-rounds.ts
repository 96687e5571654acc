/**
 * Fix until green: each time the worker gives its final answer, the task's test command runs;
 * when it fails and rounds are left, its output goes back to the worker in the same
 * conversation for another attempt. The facts of every run are kept; the last one is the
 * verdict.
 */
import type { SandboxPolicy } from '../sandbox/index.ts';
import { workerEnv } from '../sandbox/worker-env.ts';
import type { RemoteTask } from '../runners/remote-shell.ts';
import type { Environment } from '../config/paths.ts';
import { appendEvent } from '../store/job-store.ts';
import { isBrokenRunner, runTestCommand } from './verify.ts';
import type { JobFile, VerificationFacts } from '../store/job-file.ts';

const VERIFY_TIMEOUT_MS = 600_000;

/** Output of a failing run shown to the worker: the tail, where test runners put the failures. */
const FEEDBACK_TAIL_CHARS = 4_000;

export interface FixRounds {
  /**
   * Runs the tests after a final answer: undefined when the work is done (passed, out of
   * rounds, or the runner itself broke), else the message that starts the next round and the
   * turns it may take.
   */
  afterAnswer(): Promise<{ message: string; extraTurns: number } | undefined>;
  /** The last run, when the run ended on an answer that was verified; else a fresh run. */
  finalFacts(): Promise<VerificationFacts>;
  /** Runs that failed and went back to the worker, oldest first. */
  failedAttempts(): VerificationFacts[];
}

export function createFixRounds(options: {
  command: string;
  rounds: number;
  /** Turns each fix round may take on top of what is left. */
  turnsPerRound: number;
  runTests(): Promise<VerificationFacts>;
  /** False once the task was cancelled or timed out: no more rounds. */
  mayContinue(): boolean;
}): FixRounds {
  const runs: VerificationFacts[] = [];
  let lastAnswerVerified = false;
  return {
    async afterAnswer() {
      const facts = await options.runTests();
      runs.push(facts);
      lastAnswerVerified = true;
      const roundsUsed = runs.length - 1;
      if (
        facts.exitCode === 0 ||
        roundsUsed >= options.rounds ||
        isBrokenRunner(facts) ||
        !options.mayContinue()
      ) {
        return undefined;
      }
      lastAnswerVerified = false;
      return {
        message: feedback(facts, roundsUsed + 1, options.rounds),
        extraTurns: options.turnsPerRound,
      };
    },
    async finalFacts() {
      const last = runs.at(-1);
      if (last && lastAnswerVerified) return last;
      // The run ended another way (turn budget, unclear ending) after work that was not tested.
      const facts = await options.runTests();
      runs.push(facts);
      return facts;
    },
    failedAttempts: () => runs.slice(0, -1),
  };
}

/**
 * The fix rounds of a task with a test command, whatever runs its work (the builtin loop or a
 * CLI engine): each run of the tests is shown as the task's activity and logged as an event.
 */
export function createTaskFixRounds(
  job: JobFile & { testCommand: string },
  options: {
    dataHome: string;
    env: Environment;
    sandbox?: SandboxPolicy;
    /** The runner the tests run on, when the task has one. */
    remote?: RemoteTask;
    turnsPerRound: number;
    signal: AbortSignal;
    onActivity(activity: string): void;
  },
): FixRounds {
  return createFixRounds({
    command: job.testCommand,
    rounds: job.fixRounds ?? 0,
    turnsPerRound: options.turnsPerRound,
    runTests: async () => {
      options.onActivity(`verifying: ${job.testCommand}`);
      const facts = await runTestCommand(
        job.testCommand,
        job.workdir,
        workerEnv(options.env),
        VERIFY_TIMEOUT_MS,
        options.sandbox,
        options.remote,
      );
      appendEvent(options.dataHome, job.id, 'verify', `${facts.command} → exit ${facts.exitCode}`);
      return facts;
    },
    mayContinue: () => !options.signal.aborted,
  });
}

function feedback(facts: VerificationFacts, round: number, rounds: number): string {
  const how = facts.timedOut ? 'timed out' : `failed with exit code ${facts.exitCode ?? '(none)'}`;
  return [
    `The supervisor's test command \`${facts.command}\` ${how} after your answer. Its output (tail):`,
    '```',
    facts.outputTail.slice(-FEEDBACK_TAIL_CHARS),
    '```',
    `Fix the cause (round ${round} of ${rounds}): change the code, not the test, unless the test is wrong, ` +
      'and run the tests yourself before you answer again. Then give your final summary.',
  ].join('\n');
}
