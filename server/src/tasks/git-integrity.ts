import { lstat, readdir, readFile, realpath } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { git, tryGit, type PinnedRepository } from './git.ts';
import type { RecordedGit } from './worktree.ts';

/** Entries looked at when searching a task directory for git metadata; past it, the rest is unchecked. */
const SCAN_LIMIT = 300_000;
/** How long the object store's connectivity check may take (a very large repository stops it). */
const FSCK_TIMEOUT_MS = 20_000;

/**
 * Every `.git` (file or folder, any case) below `dir`, relative to it: links are not followed,
 * and nothing inside a `.git` folder is searched. `dir`'s own `.git` is left out.
 */
export async function findGitMetadata(
  dir: string,
): Promise<{ paths: string[]; isComplete: boolean }> {
  const paths: string[] = [];
  const pending = [dir];
  let seen = 0;
  while (pending.length > 0) {
    const current = pending.pop()!;
    const entries = await readdir(current, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      seen += 1;
      if (seen > SCAN_LIMIT) return { paths, isComplete: false };
      const path = join(current, entry.name);
      if (entry.name.toLowerCase() === '.git') {
        if (current !== dir) paths.push(relative(dir, path));
      } else if (entry.isDirectory()) {
        pending.push(path);
      }
    }
  }
  return { paths: paths.sort(), isComplete: true };
}

/**
 * What a worker changed of the git metadata the product relies on, compared with what was
 * recorded at task start: the checkout's `.git` (replaced, turned into a link or a pointer
 * elsewhere), a linked worktree's `commondir`, and repositories created inside the task
 * directory. Empty when nothing was touched. Read without running git.
 */
export async function gitMetadataTampering(
  recorded: RecordedGit,
  taskDir: string,
  nestedAtStart: readonly string[] = [],
): Promise<string[]> {
  const problems: string[] = [];
  const dotGit = join(recorded.workTree, '.git');
  const entry = await lstat(dotGit).catch(() => undefined);
  if (!entry) {
    problems.push(`${dotGit} was removed`);
  } else if (recorded.pointer !== undefined) {
    const text = entry.isFile() ? await readFile(dotGit, 'utf8') : undefined;
    if (text !== recorded.pointer)
      problems.push(`${dotGit} no longer points at ${recorded.gitDir}`);
  } else if (!entry.isDirectory() || (await realpath(dotGit)) !== recorded.gitDir) {
    problems.push(`${dotGit} was replaced`);
  }
  if (recorded.commonDir !== recorded.gitDir) {
    const text = await readFile(join(recorded.gitDir, 'commondir'), 'utf8').catch(() => '');
    const common = await realpath(resolve(recorded.gitDir, text.trim())).catch(() => '');
    if (common !== recorded.commonDir) {
      problems.push(`${recorded.gitDir}/commondir no longer names ${recorded.commonDir}`);
    }
  } else if (await lstat(join(recorded.gitDir, 'commondir')).catch(() => undefined)) {
    problems.push(`${recorded.gitDir}/commondir was added (it redirects the repository)`);
  }
  const nested = await findGitMetadata(taskDir);
  const created = nested.paths.filter((path) => !nestedAtStart.includes(path));
  if (created.length > 0) {
    const shown = created.slice(0, 3).map((path) => join(taskDir, path));
    problems.push(
      `git metadata was created inside the task directory: ${shown.join(', ')}${created.length > 3 ? ` and ${created.length - 3} more` : ''}`,
    );
  }
  return problems;
}

/**
 * Whether the user's repository still works: HEAD (when it had a commit at the start) and the
 * current branch resolve, refs can be listed, and (within a time bound) every ref's history is
 * complete. Returns what is broken; empty when all checks pass or could not finish in time.
 */
export async function repositoryDamage(recorded: RecordedGit): Promise<string[]> {
  const repository: PinnedRepository = { gitDir: recorded.commonDir, workTree: recorded.workTree };
  const options = { repository, timeoutMs: FSCK_TIMEOUT_MS };
  const cwd = recorded.workTree;
  const problems: string[] = [];
  const branch = (await tryGit(cwd, ['symbolic-ref', '--quiet', 'HEAD'], options))?.trim();
  const head = await tryGit(cwd, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], options);
  if (recorded.startCommit && !head) {
    problems.push(
      branch
        ? `HEAD (${branch}) no longer resolves to a commit`
        : 'HEAD no longer resolves to a commit',
    );
  }
  if ((await tryGit(cwd, ['for-each-ref', '--count=1'], options)) === undefined) {
    problems.push('the refs can no longer be read');
  }
  if (problems.length > 0 || !recorded.startCommit) return problems;
  try {
    await git(cwd, ['fsck', '--connectivity-only', '--no-dangling', '--no-progress'], options);
  } catch (error) {
    const text = String((error as Error).message);
    if (!text.includes('stopped after'))
      problems.push(`git fsck finds the history broken: ${text.slice(-300)}`);
  }
  return problems;
}
