/**
 * What `delegate uninstall` prints and does with a plan: the list (also for `--dry-run`), then
 * the removals, each reported on its own line; a removal that fails is reported and the rest go on.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, relative, isAbsolute, resolve } from 'node:path';
import { uninstallStatusLine } from './install-statusline.ts';
import { git } from '../git/git.ts';
import { errorMessage } from '../util/user-error.ts';
import type { CliContext } from './cli-command.ts';
import type { RepositoryPlan, UninstallPlan } from './uninstall-plan.ts';
import { plural } from '../util/plural.ts';

const DATA_HOME_HOLDS = 'settings, stored keys, usage ledger, task records and results';

/** The list shown before anything is removed; empty when there is nothing to remove. */
export function describePlan(plan: UninstallPlan, purgeData: boolean): string[] {
  const lines: string[] = [];
  for (const entry of plan.statusLines) {
    const restore = entry.previous
      ? `; your previous status line (\`${entry.previous}\`) is put back`
      : '';
    lines.push(`  status line: delegate's entry in ${entry.settingsPath}${restore}`);
  }
  if (!purgeData)
    for (const file of plan.statusLineFiles) lines.push(`  status line file: ${file}`);
  for (const repository of plan.repositories) lines.push(...describeRepository(repository));
  for (const dir of plan.strayWorktreeDirs) lines.push(`  leftover worktree folder: ${dir}`);
  if (purgeData && plan.hasDataHome) {
    lines.push(`  the data home ${plan.dataHome} (${DATA_HOME_HOLDS})`);
  }
  return lines;
}

function describeRepository(repository: RepositoryPlan): string[] {
  const lines = [`  in ${repository.repo}:`];
  for (const tree of repository.worktrees) {
    lines.push(`    worktree ${tree.path}${tree.branch ? ` (branch ${tree.branch})` : ''}`);
  }
  for (const branch of repository.branches) {
    const count = branch.unmergedCommits;
    const note =
      count === undefined
        ? ''
        : count > 0
          ? ` (${plural(count, 'commit')} not on HEAD: that work goes with it)`
          : ' (nothing unmerged)';
    lines.push(`    branch ${branch.name}${note}`);
  }
  return lines;
}

/**
 * Refuses a data home whose removal would take more than delegate's files: the file-system
 * root, the home folder or a folder above it, one holding the project or a git repository.
 */
export function purgeRefusal(context: CliContext): string | undefined {
  const dataHome = resolve(context.dataHome);
  const home = resolve(context.env.HOME?.trim() || homedir());
  const holds = (path: string): boolean => {
    const from = relative(dataHome, path);
    return from === '' || (!from.startsWith('..') && !isAbsolute(from));
  };
  const reason =
    dataHome === resolve('/')
      ? 'it is the file-system root'
      : holds(home)
        ? `it holds your home folder ${home}`
        : holds(resolve(context.projectDir))
          ? `it holds the project ${context.projectDir}`
          : existsSync(join(dataHome, '.git'))
            ? 'it is a git repository'
            : undefined;
  return reason
    ? `--purge-data refused: the data home ${dataHome} (DELEGATE_HOME) does not look like delegate's alone: ${reason}. Remove what you want of it by hand; nothing was removed.`
    : undefined;
}

/** Carries out the plan; returns one line per removal and how many failed. */
export async function carryOut(
  plan: UninstallPlan,
  context: CliContext,
  purgeData: boolean,
): Promise<{ lines: string[]; failures: number }> {
  const lines: string[] = [];
  let failures = 0;
  const attempt = async (done: string, action: () => unknown): Promise<void> => {
    try {
      const said = await action();
      lines.push(typeof said === 'string' ? said : done);
    } catch (error) {
      failures += 1;
      lines.push(`NOT removed: ${done.replace(/^Removed /, '')}: ${errorMessage(error)}`);
    }
  };
  for (const entry of plan.statusLines) {
    await attempt(`Removed the status line from ${entry.settingsPath}`, () =>
      uninstallStatusLine(context, entry.settingsPath),
    );
  }
  for (const repository of plan.repositories) {
    const options = { repository: repository.pinned };
    for (const tree of repository.worktrees) {
      await attempt(`Removed worktree ${tree.path}`, async () => {
        await git(
          repository.repo,
          ['worktree', 'remove', '--force', '--force', tree.path],
          options,
        );
      });
    }
    await git(repository.repo, ['worktree', 'prune'], options).catch(() => undefined);
    for (const branch of repository.branches) {
      await attempt(`Removed branch ${branch.name} in ${repository.repo}`, async () => {
        await git(repository.repo, ['branch', '-D', branch.name], options);
      });
    }
  }
  for (const dir of plan.strayWorktreeDirs) {
    await attempt(`Removed leftover worktree folder ${dir}`, () =>
      rmSync(dir, { recursive: true, force: true }),
    );
  }
  if (purgeData) {
    await attempt(`Removed the data home ${plan.dataHome}`, () =>
      rmSync(plan.dataHome, { recursive: true, force: true }),
    );
  } else {
    for (const file of plan.statusLineFiles) {
      await attempt(`Removed ${file}`, () => rmSync(file, { recursive: true, force: true }));
    }
    removeEmptyFolders(join(plan.dataHome, 'worktrees'));
  }
  return { lines, failures };
}

/** `<data home>/worktrees/<repository name>/` folders left empty, and the root if it empties. */
function removeEmptyFolders(root: string): void {
  try {
    for (const name of readdirSync(root)) {
      const dir = join(root, name);
      if (readdirSync(dir).length === 0) rmSync(dir, { recursive: true });
    }
    if (readdirSync(root).length === 0) rmSync(root, { recursive: true });
  } catch {
    // Not there, or not empty: both fine.
  }
}
