import { loadConfig } from '../profiles/load-config.ts';
import { usageReport } from '../calls/usage-report.ts';
import { usageError } from './cli-args.ts';
import type { CliCommand } from './cli-command.ts';

const USAGE = 'usage [today|all|both]';
const PERIODS = ['today', 'all', 'both'] as const;
type Period = (typeof PERIODS)[number];

/** `delegate usage`: the `usage` tool's report (calls, tokens, cost, budget left) from the ledger. */
export const usageCommand: CliCommand = {
  usage: USAGE,
  summary: 'worker calls, tokens and cost today and all time; the budget left',
  help: `Reports worker calls, tokens and cost from the ledger: today, all time, or both (the default), and the
budget left.`,
  run(args, context) {
    const [period = 'both', ...rest] = args;
    if (rest.length > 0 || !PERIODS.includes(period as Period)) {
      return Promise.resolve(usageError(context, `unknown period "${args.join(' ')}".`, USAGE));
    }
    const config = loadConfig(context.dataHome, context.projectDir, context.env);
    context.stdout.write(
      `${usageReport(context.dataHome, config, period as Period, context.now())}\n`,
    );
    return Promise.resolve(0);
  },
};
