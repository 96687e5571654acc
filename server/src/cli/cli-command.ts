import type { Environment } from '../config/paths.ts';

/** What a subcommand gets: no globals, so each can be run and tested in isolation. */
export interface CliContext {
  env: Environment;
  dataHome: string;
  projectDir: string;
  /** The plugin root (holds statusline/), worked out once by the CLI entry. */
  pluginRoot: string;
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WritableStream;
  /** Prompts and messages; stdout is kept for results scripts read. */
  stderr: NodeJS.WritableStream;
  now(): Date;
}

/** One `delegate <name>` subcommand. */
export interface CliCommand {
  /** e.g. `provider-key <profile>`. */
  usage: string;
  summary: string;
  /** `delegate <name> --help` after the usage and summary: what it does in detail, its options. */
  help: string;
  /** Resolves to the exit code. */
  run(args: readonly string[], context: CliContext): Promise<number>;
}
