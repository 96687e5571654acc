import { runExplore, EXPLORE_TURNS } from '../delegation/run-explore.ts';
import { parseCli, usageError } from './cli-args.ts';
import type { CliCommand } from './cli-command.ts';
import { printAnswer, readAll } from './run-command.ts';

const USAGE = 'explore [--profile <name>] [--agent <name>] [--max-turns <n>] <question|->';

/**
 * `delegate explore`: the `explore` tool from a terminal — a worker searches and reads the
 * project, read-only, and the answer (its references checked) and the usage line come back on
 * stdout. `-` reads the question from stdin.
 */
export const exploreCommand: CliCommand = {
  usage: USAGE,
  summary: 'a question about the code, answered by a worker that reads the project (read-only)',
  help: `A worker searches and reads the project (list, grep, read; nothing is written or run) and answers the
question on stdout; every path:line it cites is checked against the files, and one that points at
nothing is marked. Then the usage line. "-" reads the question from stdin.

Options:
  --profile <name>     the profile to call (default: the configured default)
  --agent <name>       an agent definition to follow (its read-only tools only)
  --max-turns <n>      turns at most (default ${EXPLORE_TURNS.default}, at most ${EXPLORE_TURNS.max})`,
  async run(args, context) {
    const parsed = parseCli(
      args,
      {
        profile: { type: 'string' },
        agent: { type: 'string' },
        'max-turns': { type: 'string' },
      },
      USAGE,
      context,
    );
    if (!parsed) return 2;
    const [argument] = parsed.positionals;
    if (!argument) return usageError(context, 'ask a question.', USAGE);
    const turns = parsed.values['max-turns'];
    if (turns !== undefined && !/^[1-9]\d*$/.test(turns)) {
      return usageError(context, `--max-turns takes a number, not "${turns}".`, USAGE);
    }
    const question = argument === '-' ? (await readAll(context.stdin)).trim() : argument;
    if (!question) return usageError(context, 'the question read from stdin is empty.', USAGE);
    const input = {
      question,
      ...(parsed.values.profile ? { profile: parsed.values.profile } : {}),
      ...(parsed.values.agent ? { agent: parsed.values.agent } : {}),
      ...(turns ? { maxTurns: Number(turns) } : {}),
    };
    return printAnswer(context, 'the exploration was stopped', (signal, waiting) =>
      runExplore(input, context, signal, waiting),
    );
  },
};
