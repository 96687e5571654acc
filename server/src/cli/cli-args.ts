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
    const name = usage.split(' ')[0] ?? '';
    context.stderr.write(
      `delegate ${name}: ${parseProblem(error as Error)} (see delegate ${name} --help)\n`,
    );
    return undefined;
  }
}

/** A usage error: the message and the usage line on stderr; the caller returns 2. */
export function usageError(context: CliContext, message: string, usage: string): 2 {
  context.stderr.write(`delegate: ${message}\nUsage: delegate ${usage}\n`);
  return 2;
}

/** Node's parseArgs messages, in one short sentence a terminal user reads at a glance. */
function parseProblem(error: Error & { code?: string }): string {
  const option = /'(-[^']*)'/.exec(error.message)?.[1];
  switch (error.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown option ${option ?? ''}`.trim();
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return option ? `option ${option.split(/[ ,]/)[0]} takes a value` : error.message;
    default:
      return error.message;
  }
}
