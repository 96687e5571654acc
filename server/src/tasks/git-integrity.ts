import { lstat, mkdir, readdir, readFile, realpath, rename, rm, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { git, type GitOptions } from '../git/git.ts';
import type { PinnedRepository, RecordedGit } from '../store/job-file.ts';
import { withRepositoryLock } from './repository-lock.ts';

/** Entries looked at when searching a task directory for git metadata; past it, the rest is unchecked. */
const SCAN_LIMIT = 300_000;
/** How long the object store's connectivity check may take (a very large repository stops it). */
const FSCK_TIMEOUT_MS = 20_000;

/**
 * Every `.git` (file or folder, any case) below `dir`, relative to it, except `excluded` (the
 * checkout's own): links are not followed, nothing inside a `.git` folder is searched.
 */
export async function findGitMetadata(
  dir: string,
  excluded?: string,
): Promise<{ paths: string[]; isComplete: boolean }> {
  const paths: string[] = [];
  const pending = [dir];
  let seen = 0;
  while (pending.length > 0) {
    const current = pending.pop()!;
    const entries = await readdir(current, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      seen += 1;
      if (seen > SCAN_LIMIT) return { paths: paths.sort(), isComplete: false };
      const path = join(current, entry.name);
      if (entry.name.toLowerCase() === '.git') {
        if (path !== excluded) paths.push(relative(dir, path));
      } else if (entry.isDirectory()) {
        pending.push(path);
      }
    }
  }
  return { paths: paths.sort(), isComplete: true };
}

/** Where a task's git metadata is checked, and where what a worker made of it is moved to. */
export interface GitMetadataCheck {
  recorded: RecordedGit;
  /** The folder the worker could write (the worktree, or the in-place workdir). */
  taskDir: string;
  /** `.git` entries the task directory held at the start (relative to it): the user's own. */
  nestedAtStart?: readonly string[];
  /** Where worker-made metadata goes (`jobs/<id>/quarantine`), out of git's reach. */
  quarantineDir: string;
}

/**
 * What a worker changed of the git metadata the product relies on, compared with what was
 * recorded at task start — the checkout's `.git` replaced or re-pointed, a `commondir`
 * redirect, repositories made inside the task directory — each made harmless at once: a
 * worker-made `.git` or `commondir` is moved to the quarantine folder, a linked worktree's
 * pointer and `commondir` get their recorded text back, so neither the kept worktree nor the
 * user's checkout leads git to the worker's config. Empty when nothing was touched. Reads and
 * moves files only; runs no git.
 */
export async function neutralizeTampering(check: GitMetadataCheck): Promise<string[]> {
  const { recorded } = check;
  const problems: string[] = [];
  let moved = 0;
  const quarantine = async (path: string): Promise<string> => {
    await mkdir(check.quarantineDir, { recursive: true });
    const target = join(check.quarantineDir, `${(moved += 1)}-${path.replace(/[/\\]/g, '_')}`);
    try {
      await rename(path, target);
      return `moved to ${target}`;
    } catch {
      await rm(path, { recursive: true, force: true });
      return 'removed';
    }
  };
  const dotGit = join(recorded.workTree, '.git');
  const entry = await lstat(dotGit).catch(() => undefined);
  if (!entry) {
    problems.push(`${dotGit} was removed`);
  } else if (recorded.pointer !== undefined) {
    const text = entry.isFile() ? await readFile(dotGit, 'utf8') : undefined;
    if (text !== recorded.pointer) {
      const done = await quarantine(dotGit);
      await writeFile(dotGit, recorded.pointer);
      problems.push(`${dotGit} was re-pointed (${done}; the recorded pointer is back)`);
    }
  } else if (!entry.isDirectory() || (await realpath(dotGit)) !== recorded.gitDir) {
    problems.push(`${dotGit} was replaced (${await quarantine(dotGit)})`);
  }
  problems.push(...(await checkCommonDir(recorded, quarantine)));
  const found = await findGitMetadata(check.taskDir, dotGit);
  for (const path of found.paths.filter((path) => !check.nestedAtStart?.includes(path))) {
    const absolute = join(check.taskDir, path);
    problems.push(`${absolute} is git metadata the worker made (${await quarantine(absolute)})`);
  }
  return problems;
}

async function checkCommonDir(
  recorded: RecordedGit,
  quarantine: (path: string) => Promise<string>,
): Promise<string[]> {
  const path = join(recorded.gitDir, 'commondir');
  if (recorded.commonDir === recorded.gitDir) {
    const added = await lstat(path).catch(() => undefined);
    return added
      ? [`${path} was added, redirecting the repository (${await quarantine(path)})`]
      : [];
  }
  const text = await readFile(path, 'utf8').catch(() => '');
  const common = await realpath(resolve(recorded.gitDir, text.trim())).catch(() => '');
  if (common === recorded.commonDir) return [];
  await writeFile(path, `${relative(recorded.gitDir, recorded.commonDir)}\n`);
  return [`${path} no longer named ${recorded.commonDir} (restored)`];
}

/**
 * Whether the user's repository still works: HEAD (when it had a commit at the start) and the
 * current branch resolve, refs can be listed, and — when `isThorough`, for a task whose
 * commands could write the repository (no sandbox) — every ref's history is complete (within a
 * time bound; with `dataHome`, a failure is confirmed under the repository's lock). Returns
 * what is broken; empty when all checks pass or could not finish in time.
 */
export async function repositoryDamage(
  recorded: RecordedGit,
  isThorough = true,
  dataHome?: string,
): Promise<string[]> {
  const repository: PinnedRepository = { gitDir: recorded.commonDir, workTree: recorded.workTree };
  const options = { repository, timeoutMs: FSCK_TIMEOUT_MS };
  const cwd = recorded.workTree;
  const problems: string[] = [];
  const branch = await check(cwd, ['symbolic-ref', '--quiet', 'HEAD'], options);
  const head = await check(cwd, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], options);
  if (recorded.startCommit && head === false) {
    const name = typeof branch === 'string' ? ` (${branch.trim()})` : '';
    problems.push(`HEAD${name} no longer resolves to a commit`);
  }
  if ((await check(cwd, ['for-each-ref', '--count=1'], options)) === false) {
    problems.push('its refs can no longer be read');
  }
  if (problems.length > 0 || !recorded.startCommit || !isThorough) return problems;
  // Reflogs are left out: another task's end appends to its branch's reflog at any moment.
  const fsck = () =>
    git(
      cwd,
      ['fsck', '--connectivity-only', '--no-dangling', '--no-reflogs', '--no-progress'],
      options,
    );
  try {
    await fsck().catch((error: unknown) => {
      // fsck reads every worktree: one another task is adding or removing at this moment fails
      // it, so a failure counts only when it holds while no worktree of the repository changes.
      if (dataHome === undefined || wasStopped(error)) throw error;
      return withRepositoryLock(dataHome, recorded.commonDir, fsck);
    });
  } catch (error) {
    if (!wasStopped(error)) problems.push(`git fsck finds the history broken: ${lastLines(error)}`);
  }
  return problems;
}

/**
 * A check's answer: git's output, `false` when git said no, undefined when a signal stopped git
 * (its time bound, or the task being stopped around it): that proves nothing either way.
 */
async function check(
  cwd: string,
  args: string[],
  options: GitOptions,
): Promise<string | false | undefined> {
  try {
    return await git(cwd, args, options);
  } catch (error) {
    return wasStopped(error) ? undefined : false;
  }
}

function wasStopped(error: unknown): boolean {
  const cause = (error as { cause?: { killed?: boolean; signal?: string | null } }).cause;
  return cause?.killed === true || Boolean(cause?.signal);
}

function lastLines(error: unknown): string {
  return String((error as Error).message)
    .split('\n')
    .slice(-3)
    .join(' ')
    .slice(-300);
}
