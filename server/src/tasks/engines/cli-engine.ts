import type { CliFormat } from '../../config/config-rules.ts';
import type { ResolvedProfile } from '../../config/resolved-profile.ts';

/** Why a CLI run failed, from the CLI's own structured error events (never from task text). */
export type CliFailureKind = 'auth_failed' | 'quota' | 'throttle' | 'infra';

export interface CliFailure {
  kind: CliFailureKind;
  message: string;
}

/** What one line of a CLI's JSON event stream means for the task. */
export interface CliEvent {
  /** A new model turn or tool call: the task's step advances. */
  isStep?: boolean;
  activity?: string;
  /** Cost so far as the CLI reports it (absolute, USD). */
  costUsd?: number;
  filesTouched?: string[];
  /** The CLI's final answer (the task's summary). */
  finalText?: string;
  failure?: CliFailure;
  /** The failure is certain (e.g. a rejected key): stop the CLI now rather than let it retry. */
  isFatal?: boolean;
}

export interface CliInvocationInput {
  prompt: string;
  profile: ResolvedProfile;
  /** The key for the profile's endpoint, when it has one; goes to the child's env only. */
  apiKey?: string;
  workdir: string;
  /** A private folder of this task for the CLI's state and config. */
  stateDir: string;
  /** The user's HOME, whose CLI login stays shared. */
  userHome: string;
  /** The CLI runs inside the task's OS sandbox (which may rule out its own sandbox). */
  isSandboxed: boolean;
}

export interface CliInvocation {
  args: string[];
  /** Variables for the child on top of the task's clean environment (keys included). */
  env: Record<string, string>;
  /** Variables to remove from the child's environment (nested-session guards). */
  unset: string[];
  /** Where the CLI writes its final message, when it does (read after it exits). */
  finalMessageFile?: string;
}

/** One vendor CLI: how to call it and how to read its events. */
export interface CliEngine {
  format: CliFormat;
  /** Executable looked up on PATH. */
  binary: string;
  /** What to install when it is missing. */
  npmPackage: string;
  /** What the user runs to log in (said in an auth_failed outcome). */
  loginHint: string;
  /**
   * Hosts the CLI calls with the user's own login (a profile without `baseUrl`), as found in
   * the CLI's own code: the network its sandboxed run gets, besides `allowHosts`.
   */
  loginHosts: readonly string[];
  /** The user's login files (relative to HOME) the CLI reads when the profile has no `baseUrl`. */
  loginFiles: readonly string[];
  invocation(input: CliInvocationInput): CliInvocation;
  /**
   * Why the CLI cannot run as this profile asks inside the OS sandbox, when it cannot (its own
   * sandbox would have to nest there); absent for a CLI that always can.
   */
  sandboxConflict?(profile: ResolvedProfile): string | undefined;
  /** A parser for one run's event stream (it may keep state across lines). */
  createParser(): (line: string) => CliEvent[];
}
