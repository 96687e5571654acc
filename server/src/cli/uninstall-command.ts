import { createInterface } from 'node:readline/promises';
import { CLI_WORDING } from '../util/wording.ts';
import { parseCli, usageError } from './cli-args.ts';
import type { CliCommand, CliContext } from './cli-command.ts';
import { planUninstall, type UninstallPlan } from './uninstall-plan.ts';
import { carryOut, describePlan, purgeRefusal } from './uninstall-steps.ts';

const USAGE = 'uninstall [--dry-run] [--yes] [--purge-data]';
const PLUGIN_STEP =
  'Then remove the plugin itself: /plugin uninstall delegate@delegate in Claude Code (or claude plugin uninstall delegate@delegate).';

/**
 * `delegate uninstall`: removes what delegate installed or made outside the plugin folder. It
 * lists everything first; while a task runs it refuses (a worktree removed under a running
 * worker loses its work), naming the tasks to cancel.
 */
export const uninstallCommand: CliCommand = {
  usage: USAGE,
  summary:
    "remove delegate's status line, task worktrees and delegate/* branches (and the data home, if asked)",
  help: `Removes what delegate installed or made: its status line entry in your Claude Code settings (the
status line it chained is put back), the task worktrees and delegate/<task id> branches in every
repository delegate knows from its data home (branches with unmerged work included: the list says
so), and, with --purge-data, the data home itself (settings, stored keys, usage ledger, task
records). It lists everything before removing anything. It refuses while tasks are running: cancel
them first with delegate cancel <task id>. The plugin itself is removed by Claude Code afterwards.

Options:
  --dry-run     list what would be removed; change nothing
  --yes, -y     remove without asking (needed when there is no terminal to ask on)
  --purge-data  also remove the data home (DELEGATE_HOME, default ~/.delegate)`,
  async run(args, context) {
    const options = {
      'dry-run': { type: 'boolean' },
      yes: { type: 'boolean', short: 'y' },
      'purge-data': { type: 'boolean' },
    } as const;
    const parsed = parseCli(args, options, USAGE, context);
    if (!parsed) return 2;
    if (parsed.positionals.length > 0) return usageError(context, 'takes no arguments.', USAGE);
    const purgeData = parsed.values['purge-data'] ?? false;
    const isDryRun = parsed.values['dry-run'] ?? false;
    const refusal = purgeData ? purgeRefusal(context) : undefined;
    if (refusal) {
      context.stderr.write(`delegate: ${refusal}\n`);
      return 1;
    }
    const plan = await planUninstall(context);
    const listed = describePlan(plan, purgeData);
    context.stdout.write(listing(plan, listed, purgeData, isDryRun));
    if (plan.runningTasks.length > 0) {
      context.stderr.write(runningRefusal(plan, isDryRun));
      return isDryRun ? 0 : 1;
    }
    if (isDryRun || listed.length === 0) return 0;
    if (!parsed.values.yes && !(await confirmed(context))) return 1;
    const { lines, failures } = await carryOut(plan, context, purgeData);
    context.stdout.write(`\n${lines.join('\n')}\n${failures === 0 ? PLUGIN_STEP : ''}\n`);
    return failures === 0 ? 0 : 1;
  },
};

function listing(
  plan: UninstallPlan,
  listed: readonly string[],
  purgeData: boolean,
  isDryRun: boolean,
): string {
  const head =
    listed.length === 0
      ? "delegate uninstall: nothing of delegate's to remove (no status line entry, task worktree or delegate/* branch found)."
      : `delegate uninstall ${isDryRun ? 'would remove (dry run: nothing is changed)' : 'removes'}:\n${listed.join('\n')}`;
  const kept =
    !purgeData && plan.hasDataHome
      ? `\nKept: the data home ${plan.dataHome} (settings, stored keys, usage ledger, task records); add --purge-data to remove it too.`
      : '';
  const backups = plan.settingsBackups.length
    ? `\nKept: the copies of your Claude Code settings delegate took before changing them (delete them once you no longer need them): ${plan.settingsBackups.join(', ')}`
    : '';
  const problems = plan.problems.map((problem) => `\nSkipped: ${problem}`).join('');
  return `${head}${kept}${backups}${problems}\n`;
}

function runningRefusal(plan: UninstallPlan, isDryRun: boolean): string {
  const tasks = plan.runningTasks.map(
    (job) => `  ${job.id} (${job.state}, ${job.project}): ${CLI_WORDING.cancel(job.id)}`,
  );
  return `${isDryRun ? 'uninstall would refuse now' : 'delegate uninstall refused; nothing was removed'}: ${tasks.length} task${tasks.length === 1 ? ' is' : 's are'} still running, and removing a worktree under a worker loses its work. Cancel ${tasks.length === 1 ? 'it' : 'them'} first, then run delegate uninstall again:\n${tasks.join('\n')}\n`;
}

/** Asks on a terminal; without one, says how to go on and declines. */
async function confirmed(context: CliContext): Promise<boolean> {
  if (!context.stdin.isTTY) {
    context.stderr.write(
      'Nothing was removed: there is no terminal to confirm on. Run delegate uninstall --yes to remove the above (delegate uninstall --dry-run only lists it).\n',
    );
    return false;
  }
  const prompt = createInterface({ input: context.stdin, output: context.stderr });
  try {
    const answer = await prompt.question('Remove all of the above? [y/N] ');
    if (/^y(es)?$/i.test(answer.trim())) return true;
    context.stderr.write('Nothing was removed.\n');
    return false;
  } finally {
    prompt.close();
  }
}
