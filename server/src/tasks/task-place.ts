import { realpath } from 'node:fs/promises';
import { basename, join, relative } from 'node:path';
import { UserError } from '../util/user-error.ts';
import { git, resolveCommit } from '../git/git.ts';
import { findGitShapes } from '../git/git-shapes.ts';
import { snapshotSkips, takeSnapshot, type SnapshotSkips } from './in-place-snapshot.ts';
import { snapshotWorkingTree, type WorkingTreeSnapshot } from './working-tree.ts';
import { isGitRepository, recordGit } from './worktree.ts';
import { createWorktree, removeWorktree } from './worktree-lifecycle.ts';
import type { RecordedGit } from '../store/job-file.ts';
import type { JobFile } from '../store/job-file.ts';

type WorktreePlace = Pick<
  JobFile,
  | 'workdir'
  | 'repoDir'
  | 'worktreePath'
  | 'branch'
  | 'baseCommit'
  | 'git'
  | 'uncommittedAtStart'
  | 'nestedGitAtStart'
  | 'gitShapesAtStart'
>;

/**
 * The task's worktree on branch `delegate/<id>`: from `baseBranch` when given, else from what
 * the user sees (a snapshot commit of the uncommitted changes on top of HEAD, HEAD when clean).
 * Refuses, before making anything, a repository with no commit to start from.
 */
export async function makeWorktree(
  id: string,
  workdir: string,
  baseBranch: string | undefined,
  dataHome: string,
): Promise<WorktreePlace> {
  const repository = await recordedAtTop(workdir);
  const repoDir = repository.workTree;
  const snapshot = baseBranch ? undefined : await startingPoint(repoDir, repository);
  const base = baseBranch
    ? await resolveCommit(repoDir, baseBranch, { repository })
    : (snapshot?.commit ?? repository.startCommit);
  if (!base) {
    throw new UserError(`base_branch "${baseBranch}" does not name a commit in ${repoDir}.`);
  }
  const created = await createWorktree({
    dataHome,
    repoDir,
    worktreePath: join(dataHome, 'worktrees', basename(repoDir), id),
    branch: `delegate/${id}`,
    baseCommit: base,
    repository,
  });
  return {
    workdir: join(created.path, relative(repoDir, workdir)),
    repoDir,
    worktreePath: created.path,
    branch: created.branch,
    baseCommit: created.baseCommit,
    git: created.git,
    ...(await shapesAtStart(created.path, join(created.path, '.git'))),
    ...(snapshot ? { uncommittedAtStart: { head: snapshot.head, files: snapshot.files } } : {}),
  };
}

/**
 * Removes what {@link makeWorktree} made (the worktree and its branch) for a start that failed
 * after it; nothing for a task in place or a start that made no place.
 */
export async function undoPlace(
  dataHome: string,
  place: Partial<Pick<JobFile, 'repoDir' | 'worktreePath' | 'branch' | 'git'>> | undefined,
): Promise<void> {
  if (!place?.repoDir || !place.worktreePath || !place.branch) return;
  await removeWorktree({
    dataHome,
    repoDir: place.repoDir,
    ...(place.git ? { commonDir: place.git.commonDir } : {}),
    worktreePath: place.worktreePath,
    branch: place.branch,
    discardBranch: true,
  });
}

/**
 * The metadata of the checkout holding `dir`, recorded from its top: once when `dir` is the top
 * (the usual case); from a folder inside, again from the top, where every git version reports
 * the common directory alike.
 */
async function recordedAtTop(dir: string): Promise<RecordedGit> {
  const repository = await recordGit(dir);
  if (repository.workTree === (await realpath(dir))) return repository;
  return recordGit(repository.workTree);
}

async function startingPoint(
  repoDir: string,
  repository: RecordedGit,
): Promise<WorkingTreeSnapshot | undefined> {
  if (!repository.startCommit) {
    throw new UserError(
      `${repoDir} has no commits yet, so there is nothing to start a worktree from. Make a first commit (git add -A && git commit -m "initial") and start the task again, or pass isolation: "none" to let the task work in place.`,
    );
  }
  return snapshotWorkingTree(repository);
}

/**
 * Where a task works: as asked, else in a worktree when its workdir is in a git repository.
 * Outside one it works in place only when asked to, since it then edits the user's files.
 */
export async function chooseIsolation(
  asked: 'worktree' | 'none' | undefined,
  workdir: string,
  isOnRunner: boolean,
): Promise<'worktree' | 'none'> {
  const isRepository = await isGitRepository(workdir);
  if (isOnRunner && (asked === 'none' || !isRepository)) {
    throw new UserError(
      `A task on a runner works in a worktree whose files travel with git: run it in a git repository, without isolation "none".`,
    );
  }
  if (isRepository) return asked ?? 'worktree';
  if (asked === 'none') return 'none';
  throw new UserError(
    `${workdir} is not in a git repository, so ${asked ? 'no worktree can be made' : 'the task would edit your files in place with no branch to review'}. Make it one (git init && git add -A && git commit -m "initial") for a worktree of its own, or pass isolation: "none" to work in place (the files are snapshotted first; task_cleanup with discard: true puts them back).`,
  );
}

/**
 * An in-place task: the snapshot of its workdir (in the job folder `jobDir`), and in a
 * repository where its git metadata is and the git-shaped paths already inside its directory
 * (the user's own; any other one at the end was made by the worker).
 */
export async function inPlace(
  workdir: string,
  jobDir: string,
  dataHome: string,
): Promise<
  Pick<JobFile, 'workdir' | 'git' | 'nestedGitAtStart' | 'gitShapesAtStart' | 'snapshot'>
> {
  const snapshotDir = join(jobDir, 'snapshot');
  if (!(await isGitRepository(workdir))) {
    return { workdir, snapshot: await takeSnapshot(workdir, snapshotDir, snapshotSkips(dataHome)) };
  }
  const git = await recordGit(workdir);
  const skips = { ...(await ignoredFolders(workdir, git)), ...snapshotSkips(dataHome) };
  const snapshot = await takeSnapshot(workdir, snapshotDir, skips);
  return { workdir, git, ...(await shapesAtStart(workdir, join(git.workTree, '.git'))), snapshot };
}

/**
 * The folders git ignores under `workdir` (dependencies, build output): left out of an in-place
 * snapshot, as they would be of a worktree — a `node_modules` must not make a repository too
 * big to work in place. Ignored files in other folders (a `.env`) are still snapshotted.
 */
async function ignoredFolders(workdir: string, repository: RecordedGit): Promise<SnapshotSkips> {
  const listing = await git(
    workdir,
    ['ls-files', '--others', '--ignored', '--exclude-standard', '--directory', '-z'],
    { repository },
  );
  const folders = listing.split('\0').filter((path) => path.endsWith('/'));
  return Object.fromEntries(
    folders.map((path) => [join(workdir, path.slice(0, -1)), 'ignored by git, not snapshotted']),
  );
}

/** The git-shaped paths of a task directory at its start, with their fingerprints. */
async function shapesAtStart(
  taskDir: string,
  ownGit: string,
): Promise<Pick<JobFile, 'nestedGitAtStart' | 'gitShapesAtStart'>> {
  const { shapes } = await findGitShapes(taskDir, ownGit);
  if (shapes.length === 0) return {};
  return {
    // The task directory itself stays writable (its fingerprint is still checked at the end).
    nestedGitAtStart: shapes.map((shape) => shape.path).filter(Boolean),
    gitShapesAtStart: Object.fromEntries(shapes.map((shape) => [shape.path, shape.fingerprint])),
  };
}
