/**
 * Tasks whose files do not parse (a torn or emptied job.json, a cut-off result.json): they are
 * listed as `damaged` with what is wrong and where their worktree and branch are, and
 * task_cleanup removes them. The worktree and branch are found from what the file still holds,
 * else from the project's own repository (`git worktree list`, the `delegate/<id>` branch),
 * else from the data home's worktrees folder.
 */
import { existsSync, rmSync } from 'node:fs';
import { basename, join, relative, isAbsolute } from 'node:path';
import { errorMessage } from '../util/user-error.ts';
import { TOOL_WORDING, type Wording } from '../util/wording.ts';
import { tryGit } from '../git/git.ts';
import { strayWorktree } from '../store/job-damage.ts';
import { jobDir, type JobDamage } from '../store/job-store.ts';
import { endTaskProcesses } from './task-processes.ts';
import { repositoryRoot } from './worktree.ts';
import { removeWorktree } from './worktree-lifecycle.ts';

export interface DamagedJob extends JobDamage {
  /** The project it belongs to, when the file or its repository tells. */
  project?: string;
  repoDir?: string;
  worktreePath?: string;
  branch?: string;
}

/** The user's repository around the project: its root, worktrees and delegate branches. */
export interface ProjectRepository {
  root: string;
  worktrees: Array<{ path: string; branch?: string }>;
  branches: Set<string>;
}

export async function projectRepository(project: string): Promise<ProjectRepository | undefined> {
  const root = await repositoryRoot(project).catch(() => undefined);
  if (!root) return undefined;
  const listing = (await tryGit(root, ['worktree', 'list', '--porcelain'])) ?? '';
  const worktrees = listing
    .split('\n\n')
    .map((block) => {
      const path = /^worktree (.*)$/m.exec(block)?.[1];
      const branch = /^branch refs\/heads\/(.*)$/m.exec(block)?.[1];
      return path ? { path, ...(branch ? { branch } : {}) } : undefined;
    })
    .filter((entry) => entry !== undefined);
  const refs = await tryGit(root, [
    'for-each-ref',
    '--format=%(refname:short)',
    'refs/heads/delegate/',
  ]);
  return { root, worktrees, branches: new Set((refs ?? '').split('\n').filter(Boolean)) };
}

/** Where a damaged task's worktree and branch are, and whether it belongs to `project`. */
export function locateDamaged(
  dataHome: string,
  damage: JobDamage,
  project: string,
  repository: ProjectRepository | undefined,
): DamagedJob & { isOfProject: boolean } {
  const known = damage.job ?? salvageFields(damage.text ?? '');
  const branchName = `delegate/${damage.id}`;
  const registered = repository?.worktrees.find(
    (entry) =>
      entry.branch === branchName ||
      (basename(entry.path) === damage.id && isInside(join(dataHome, 'worktrees'), entry.path)),
  );
  const worktreePath = known.worktreePath ?? registered?.path ?? strayWorktree(dataHome, damage.id);
  const branch = known.branch ?? (repository?.branches.has(branchName) ? branchName : undefined);
  const isInRepository = registered !== undefined || repository?.branches.has(branchName) === true;
  const repoDir = known.repoDir ?? (isInRepository ? repository?.root : undefined);
  // A task nothing ties to any project is shown everywhere: never invisible.
  const isOfProject =
    known.project !== undefined
      ? known.project === project
      : isInRepository || worktreePath === undefined;
  return {
    ...damage,
    ...(known.project !== undefined ? { project: known.project } : {}),
    ...(repoDir !== undefined ? { repoDir } : {}),
    ...(worktreePath !== undefined ? { worktreePath } : {}),
    ...(branch !== undefined ? { branch } : {}),
    isOfProject,
  };
}

/** String fields a cut-off job.json may still hold whole (its first lines survive a torn write). */
function salvageFields(
  text: string,
): Partial<Record<'project' | 'repoDir' | 'worktreePath' | 'branch', string>> {
  const fields: Partial<Record<'project' | 'repoDir' | 'worktreePath' | 'branch', string>> = {};
  for (const name of ['project', 'repoDir', 'worktreePath', 'branch'] as const) {
    const literal = new RegExp(`"${name}"\\s*:\\s*("(?:[^"\\\\]|\\\\.)*")`).exec(text)?.[1];
    if (!literal) continue;
    try {
      const value: unknown = JSON.parse(literal);
      if (typeof value === 'string' && value) fields[name] = value;
    } catch {
      // Not a whole string: nothing to salvage.
    }
  }
  return fields;
}

function isInside(root: string, path: string): boolean {
  const fromRoot = relative(root, path);
  return fromRoot !== '' && !fromRoot.startsWith('..') && !isAbsolute(fromRoot);
}

const MAX_LINE = 160;

/** Two lines: the state and what to do (≤ 160 characters), then the file, worktree and branch. */
export function damagedStatusLine(job: DamagedJob, wording: Wording = TOOL_WORDING): string {
  // The next step is never cut off: the problem is shortened instead.
  const next = ` → ${wording.cleanup(job.id)} removes it`;
  const what = `${job.id} damaged: ${basename(job.file)} ${job.problem}`;
  const room = MAX_LINE - next.length;
  const line = `${what.length <= room ? what : `${what.slice(0, room - 1)}…`}${next}`;
  const details = [
    `file ${job.file}`,
    job.worktreePath ? `worktree ${job.worktreePath}` : 'no worktree found',
    job.branch ? `branch ${job.branch}` : 'no branch found',
  ];
  return `${line}\n  ${details.join(' · ')}`;
}

/**
 * Removes a damaged task: stops any process still carrying its id, removes its worktree and its
 * branch (kept when it holds unmerged commits or with keepBranch, and the line says so), then
 * its job folder.
 */
export async function cleanDamaged(
  dataHome: string,
  job: DamagedJob,
  keepBranch: boolean,
): Promise<string> {
  // Damaged: nothing of it is trusted to be ending well, so no grace.
  await endTaskProcesses(dataHome, { id: job.id }, { graceMs: 0 });
  const notes: string[] = [];
  const branch = job.branch ?? `delegate/${job.id}`;
  if (job.repoDir && existsSync(job.repoDir)) {
    try {
      const removed = await removeWorktree({
        dataHome,
        repoDir: job.repoDir,
        worktreePath: job.worktreePath ?? join(dataHome, 'worktrees', '-', job.id),
        branch,
        keepBranch,
      });
      if (removed.worktreeRemoved) notes.push(`worktree ${job.worktreePath} removed`);
      notes.push(
        removed.branchDeleted
          ? `branch ${branch} deleted`
          : removed.note
            ? `branch ${branch} kept (${removed.note})`
            : 'no branch to delete',
      );
    } catch (error) {
      notes.push(`the worktree and branch could not be removed: ${errorMessage(error)}`);
    }
  }
  // A folder git no longer knows (or whose repository is gone) is removed when it is delegate's.
  if (job.worktreePath && isInside(join(dataHome, 'worktrees'), job.worktreePath)) {
    if (existsSync(job.worktreePath)) {
      rmSync(job.worktreePath, { recursive: true, force: true });
      notes.push(`folder ${job.worktreePath} removed`);
    }
  }
  rmSync(jobDir(dataHome, job.id), { recursive: true, force: true });
  return `${job.id}: damaged task cleaned up${notes.length ? `; ${notes.join('; ')}` : ''}`;
}
