/**
 * What `delegate uninstall` would remove, found without changing anything: delegate's status
 * line entries, the task worktrees and `delegate/<task id>` branches in every repository the
 * data home knows (from its task records and from the worktrees it holds), and the data home.
 */
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { basename, dirname, join, relative, isAbsolute } from 'node:path';
import { claudeSettingsPath } from './claude-settings.ts';
import { installedStatusLines, statusLineFiles } from './install-statusline.ts';
import type { InstalledStatusLine } from './install-statusline.ts';
import { tryGit } from '../git/git.ts';
import { isTerminal, listJobs } from '../store/job-store.ts';
import { reconcileJob } from '../tasks/reconcile.ts';
import type { CliContext } from './cli-command.ts';
import type { PinnedRepository } from '../store/job-file.ts';
import type { JobFile } from '../store/job-file.ts';

/** Only branches named like the ones tasks make: `delegate/t_<letters and digits>`. */
const TASK_BRANCH = /^delegate\/t_[a-z0-9]+$/;

export interface RepositoryPlan {
  /** The repository's top folder. */
  repo: string;
  /** git pinned to the repository found from a task record (never from a worktree's `.git`). */
  pinned: PinnedRepository;
  worktrees: { path: string; branch?: string }[];
  branches: { name: string; unmergedCommits: number | undefined }[];
  /** Task branches left alone, and why (checked out in a worktree of the user's). */
  kept: string[];
}

export interface UninstallPlan {
  statusLines: InstalledStatusLine[];
  statusLineFiles: string[];
  /** Copies of settings files taken before delegate changed them: kept, and said so. */
  settingsBackups: string[];
  repositories: RepositoryPlan[];
  /** Folders under `<data home>/worktrees/` that no known repository lists as a worktree. */
  strayWorktreeDirs: string[];
  /** Tasks still running: uninstall refuses while there are any. */
  runningTasks: JobFile[];
  /** What could not be read (a settings file that is not JSON, a repository gone). */
  problems: string[];
  dataHome: string;
  hasDataHome: boolean;
}

export async function planUninstall(context: CliContext): Promise<UninstallPlan> {
  const statusLines = installedStatusLines(context);
  const jobs = await Promise.all(
    listJobs(context.dataHome).map((job) => currentState(context, job)),
  );
  const worktreesRoot = join(context.dataHome, 'worktrees');
  const problems = [...statusLines.problems];
  const repositories: RepositoryPlan[] = [];
  for (const [repo, pinned] of knownRepositories(jobs, worktreesRoot)) {
    const plan = await planRepository(repo, pinned, worktreesRoot);
    if (typeof plan === 'string') {
      problems.push(plan);
      continue;
    }
    problems.push(...plan.kept);
    if (plan.worktrees.length > 0 || plan.branches.length > 0) repositories.push(plan);
  }
  const listed = new Set(repositories.flatMap((plan) => plan.worktrees.map((tree) => tree.path)));
  return {
    statusLines: statusLines.installed,
    statusLineFiles: statusLineFiles(context.dataHome),
    settingsBackups: settingsBackups([
      claudeSettingsPath(context.env),
      ...statusLines.installed.map((entry) => entry.settingsPath),
    ]),
    repositories,
    strayWorktreeDirs: taskFolders(worktreesRoot).filter((dir) => !listed.has(dir)),
    runningTasks: jobs.filter((job) => !isTerminal(job.state)),
    problems,
    dataHome: context.dataHome,
    hasDataHome: existsSync(context.dataHome),
  };
}

/** `<settings>.delegate-backup-<time>` files beside each settings file. */
function settingsBackups(settingsPaths: readonly string[]): string[] {
  return [...new Set(settingsPaths)].flatMap((path) => {
    try {
      const prefix = `${basename(path)}.delegate-backup-`;
      return readdirSync(dirname(path))
        .filter((name) => name.startsWith(prefix))
        .map((name) => join(dirname(path), name));
    } catch {
      return [];
    }
  });
}

/** A task recorded as running whose worker died is settled (lost) first, as every reader does. */
async function currentState(context: CliContext, job: JobFile): Promise<JobFile> {
  try {
    return await reconcileJob(context.dataHome, job);
  } catch {
    return job;
  }
}

/**
 * Repositories by their shared git folder: from task records (as recorded at the task's start),
 * and from the worktrees left in the data home whose task record is gone, when the repository's
 * own worktree record names that very folder.
 */
function knownRepositories(
  jobs: readonly JobFile[],
  worktreesRoot: string,
): Map<string, PinnedRepository> {
  const byCommonDir = new Map<string, { repo: string; pinned: PinnedRepository }>();
  for (const job of jobs) {
    if (job.isolation !== 'worktree' || !job.repoDir) continue;
    const commonDir = job.git?.commonDir ?? join(job.repoDir, '.git');
    byCommonDir.set(commonDir, {
      repo: job.repoDir,
      pinned: { gitDir: commonDir, workTree: job.repoDir },
    });
  }
  for (const dir of taskFolders(worktreesRoot)) {
    const commonDir = repositoryOfWorktree(dir);
    if (!commonDir || byCommonDir.has(commonDir) || basename(commonDir) !== '.git') continue;
    const repo = dirname(commonDir);
    byCommonDir.set(commonDir, { repo, pinned: { gitDir: commonDir, workTree: repo } });
  }
  return new Map([...byCommonDir.values()].map(({ repo, pinned }) => [repo, pinned]));
}

/** `<data home>/worktrees/<repository name>/<task id>` folders (real paths). */
function taskFolders(worktreesRoot: string): string[] {
  return subfolders(worktreesRoot).flatMap((group) => subfolders(group));
}

function subfolders(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => realpathSync(join(dir, entry.name)));
  } catch {
    return [];
  }
}

/**
 * The shared git folder of the repository a worktree belongs to, trusted only when that
 * repository's record of the worktree (`<common>/worktrees/<name>/gitdir`) points back at it.
 */
function repositoryOfWorktree(dir: string): string | undefined {
  try {
    const pointer = /^gitdir: (.+)$/m.exec(readFileSync(join(dir, '.git'), 'utf8'))?.[1]?.trim();
    if (!pointer || !isAbsolute(pointer)) return undefined;
    const named = readFileSync(join(pointer, 'gitdir'), 'utf8').trim();
    if (realpathSync(dirname(named)) !== dir) return undefined;
    return realpathSync(dirname(dirname(pointer)));
  } catch {
    return undefined;
  }
}

async function planRepository(
  repo: string,
  pinned: PinnedRepository,
  worktreesRoot: string,
): Promise<RepositoryPlan | string> {
  const options = { repository: pinned };
  const listing = existsSync(repo)
    ? await tryGit(repo, ['worktree', 'list', '--porcelain'], options)
    : undefined;
  if (listing === undefined) return `${repo}: not a git repository any more; skipped.`;
  // Only the worktrees tasks made, in the data home: never the main working tree, nor one the
  // user made (even on a task branch: it may hold their edits).
  const all = parseWorktrees(listing);
  const worktrees = all.slice(1).filter((tree) => isInside(worktreesRoot, tree.path));
  const usersCheckout = new Map(
    all.filter((tree) => !worktrees.includes(tree)).map((tree) => [tree.branch, tree.path]),
  );
  const refs = await tryGit(
    repo,
    ['for-each-ref', '--format=%(refname:strip=2)', 'refs/heads/delegate/'],
    options,
  );
  const names = (refs ?? '').split('\n').filter((name) => TASK_BRANCH.test(name));
  const kept = names.flatMap((name) => {
    const path = usersCheckout.get(name);
    return path ? [`${repo}: branch ${name} is kept: it is checked out in ${path}.`] : [];
  });
  const branches = await Promise.all(
    names
      .filter((name) => !usersCheckout.has(name))
      .map(async (name) => {
        const count = await tryGit(
          repo,
          ['rev-list', '--count', `HEAD..refs/heads/${name}`],
          options,
        );
        return { name, unmergedCommits: count === undefined ? undefined : Number(count.trim()) };
      }),
  );
  return { repo, pinned, worktrees, branches, kept };
}

function parseWorktrees(listing: string): { path: string; branch?: string }[] {
  return listing
    .split('\n\n')
    .filter((block) => block.startsWith('worktree '))
    .map((block) => {
      const lines = block.split('\n');
      const path = lines[0]!.slice('worktree '.length);
      const branch = lines.find((line) => line.startsWith('branch refs/heads/'));
      return {
        path: realpathOrSelf(path),
        ...(branch ? { branch: branch.slice('branch refs/heads/'.length) } : {}),
      };
    });
}

function isInside(parent: string, path: string): boolean {
  const from = relative(realpathOrSelf(parent), path);
  return from !== '' && !from.startsWith('..') && !isAbsolute(from);
}

function realpathOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
