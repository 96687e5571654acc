import { projectKey, readOutcomes, resetOutcomes } from '../calls/outcomes.ts';
import { scoreboardText } from '../calls/scoreboard.ts';
import { parseCli } from './cli-args.ts';
import type { CliCommand } from './cli-command.ts';

const USAGE = 'scoreboard [--all] [--reset [--profile <name>]]';

/** `delegate scoreboard`: what each profile's verified work came to, here or everywhere; or forget it. */
export const scoreboardCommand: CliCommand = {
  usage: USAGE,
  summary:
    "each profile's verified pass rate, cost per pass and time, by task kind; --reset forgets",
  help: `Shows, for this project (--all: every project), each profile's record from the outcomes this machine
kept: tasks run, how many of the verified ones passed (tests, then the reviewer), the cost per passed
task, the median time and fix rounds; for one-shots and explorations, whole answers, errors and
cut-offs. profile "auto" chooses by it. Nothing of it leaves this machine.

--reset forgets this project's outcomes (with --all, every project's; with --profile, only that
profile's), so "auto" learns afresh.`,
  run(args, context) {
    const parsed = parseCli(
      args,
      {
        all: { type: 'boolean' },
        reset: { type: 'boolean' },
        profile: { type: 'string' },
      },
      USAGE,
      context,
    );
    if (!parsed) return Promise.resolve(2);
    const { all, reset, profile } = parsed.values;
    if (parsed.positionals.length > 0 || (profile !== undefined && !reset)) {
      context.stderr.write(
        `delegate scoreboard: ${profile !== undefined ? '--profile goes with --reset' : `unexpected "${parsed.positionals.join(' ')}"`}\nUsage: delegate ${USAGE}\n`,
      );
      return Promise.resolve(2);
    }
    const project = all ? undefined : projectKey(context.projectDir);
    if (reset) {
      const forgotten = resetOutcomes(context.dataHome, {
        ...(project !== undefined ? { project } : {}),
        ...(profile !== undefined ? { profile } : {}),
      });
      const whose = `${profile !== undefined ? `profile ${profile}'s ` : ''}outcomes of ${project ?? 'every project'}`;
      context.stdout.write(`Forgot ${forgotten} ${whose}.\n`);
      return Promise.resolve(0);
    }
    context.stdout.write(`${scoreboardText(readOutcomes(context.dataHome), project)}\n`);
    return Promise.resolve(0);
  },
};
