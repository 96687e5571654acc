import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { CliContext } from './cli-command.ts';

type Options = NonNullable<ParseArgsConfig['options']>;

export interface ParsedCli<T extends Options> {
  values: ReturnType<
    typeof parseArgs<{ options: T; allowPositionals: true; strict: true }>
  >['values'];
  positionals: string[];
}

/**
 * Parses a subcommand's arguments; on a mistake writes the error and the usage line to stderr
 * and returns undefined, so the command exits 2 (a usage error) without a stack trace.
 */
export function parseCli<T extends Options>(
  args: readonly string[],
  options: T,
  usage: string,
  context: CliContext,
): ParsedCli<T> | undefined {
  try {
    const { values, positionals } = parseArgs({
      args: [...args],
      options,
      allowPositionals: true,
      strict: true,
    });
    return { values, positionals };
  } catch (error) {
    context.stderr.write(`delegate: ${(error as Error).message}\nUsage: delegate ${usage}\n`);
    return undefined;
  }
}

/** A usage error: the message and the usage line on stderr; the caller returns 2. */
export function usageError(context: CliContext, message: string, usage: string): 2 {
  context.stderr.write(`delegate: ${message}\nUsage: delegate ${usage}\n`);
  return 2;
}
