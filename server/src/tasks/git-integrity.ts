import { lstat, mkdir, readdir, readFile, realpath, rename, rm, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { git, type GitOptions } from '../git/git.ts';
import { describeShape, findGitShapes, makeInert } from '../git/git-shapes.ts';
import type { GitShapesAtStart, PinnedRepository, RecordedGit } from '../store/job-file.ts';
import { quotePath } from '../util/inert-text.ts';
import { withRepositoryLock } from './repository-lock.ts';

/** How long the object store's connectivity check may take (a very large repository stops it). */
const FSCK_TIMEOUT_MS = 20_000;

/** Where a task's git metadata is checked, and where what a worker made of it is moved to. */
export interface GitMetadataCheck {
  recorded: RecordedGit;
  /** The folder the worker could write (the worktree, or the in-place workdir). */
  taskDir: string;
  /** Git-shaped paths the task directory held at the start (relative to it): the user's own. */
  shapesAtStart?: GitShapesAtStart;
  /** Whether the task directory is disposable (a worktree): changed shapes there are moved out too. */
  isDisposable: boolean;
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
      await makeInert(target);
      return `moved to ${quotePath(target)}`;
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
  problems.push(...(await checkShapes(check, dotGit, quarantine)));
  return problems;
}

async function headEntryOf(dir: string): Promise<string | undefined> {
  return (await readdir(dir).catch(() => [])).find((name) => name.toLowerCase() === 'head');
}

/**
 * Git-shaped paths (see git-shapes.ts) the worker made or changed: each one made is moved to
 * the quarantine and made inert; one changed is too in a disposable worktree, and is reported
 * but left where it is in the user's own folder (it was theirs before the task).
 */
async function checkShapes(
  check: GitMetadataCheck,
  dotGit: string,
  quarantine: (path: string) => Promise<string>,
): Promise<string[]> {
  const problems: string[] = [];
  const before = check.shapesAtStart ?? {};
  const { shapes } = await findGitShapes(check.taskDir, dotGit);
  for (const shape of shapes) {
    const known = Object.hasOwn(before, shape.path);
    const recorded = known ? before[shape.path] : undefined;
    // A path recorded without a fingerprint (a task from before they were taken) is the user's.
    if (known && (!recorded || recorded === shape.fingerprint)) continue;
    const what = `${await describeShape(check.taskDir, shape)}${known ? ' and was changed by the worker' : ''}`;
    if (known && !check.isDisposable) {
      problems.push(`${what} (left in place: it was there before the task)`);
      continue;
    }
    // The task directory itself: moving its HEAD out unmakes the repository.
    const absolute = shape.path
      ? join(check.taskDir, shape.path)
      : join(check.taskDir, (await headEntryOf(check.taskDir)) ?? 'HEAD');
    const moved = await quarantine(absolute);
    problems.push(`${what} (${moved})`);
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
    if (wasStopped(error)) return problems;
    // fsck lists the objects first and follows the refs after: a commit another task's end
    // writes in between is "missing" to it, though it was there before its ref pointed at it.
    const missing = missingObjects(error);
    const isThere = async (object: string) =>
      typeof (await check(cwd, ['cat-file', '-e', object], options)) === 'string';
    if (missing && (await Promise.all(missing.map(isThere))).every(Boolean)) return problems;
    problems.push(`git fsck finds the history broken: ${lastLines(error)}`);
  }
  return problems;
}

/**
 * The objects git fsck said were missing, when that is all it said (each line "missing <type>
 * <id>", on stdout, with nothing on stderr); undefined for any other finding.
 */
export function missingObjects(error: unknown): string[] | undefined {
  const cause = (error as { cause?: { stdout?: unknown; stderr?: unknown } }).cause;
  if (
    typeof cause?.stdout !== 'string' ||
    (typeof cause.stderr === 'string' && cause.stderr.trim())
  )
    return undefined;
  const lines = cause.stdout.split('\n').filter((line) => line.trim() !== '');
  const objects = lines.map(
    (line) => /^missing [a-z]+ ([0-9a-f]{40}|[0-9a-f]{64})$/.exec(line.trim())?.[1],
  );
  return objects.length > 0 && objects.every((object) => object !== undefined)
    ? objects
    : undefined;
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
