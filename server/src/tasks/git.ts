import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** Patches and name lists of a big refactor exceed execFile's 1 MB default. */
const MAX_OUTPUT_BYTES = 256 * 1024 * 1024;

/**
 * Variables that would point git at another repository or index than the directory it runs
 * in: set when the server itself is started from a git hook or `git rebase --exec`.
 */
const REDIRECTING_VARIABLES = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_COMMON_DIR',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_PREFIX',
  'GIT_NAMESPACE',
];

/**
 * Settings on every call: repository hooks never run (a failing pre-commit hook must not lose
 * a worker's work), commits are never signed (no passphrase prompt) and paths stay unquoted.
 */
const FIXED_CONFIG = [
  '-c',
  'core.hooksPath=/dev/null',
  '-c',
  'commit.gpgSign=false',
  '-c',
  'core.quotePath=false',
];

export interface GitOptions {
  /** Variables added to (or overriding) the server's environment for this call. */
  env?: Record<string, string>;
}

function gitEnvironment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of REDIRECTING_VARIABLES) delete env[name];
  return { ...env, GIT_TERMINAL_PROMPT: '0', ...extra };
}

/** Runs `git <args>` in cwd (no shell) and returns stdout; a failure throws with git's stderr. */
export async function git(cwd: string, args: string[], options: GitOptions = {}): Promise<string> {
  try {
    const { stdout } = await execFileAsync('git', [...FIXED_CONFIG, ...args], {
      cwd,
      env: gitEnvironment(options.env),
      maxBuffer: MAX_OUTPUT_BYTES,
      encoding: 'utf8',
    });
    return stdout;
  } catch (error) {
    const failure = error as NodeJS.ErrnoException & { stderr?: string };
    const detail = failure.stderr?.trim() || failure.message;
    const hint =
      failure.code === 'ENOENT' ? ' (is git installed and does the directory exist?)' : '';
    throw new Error(`git ${args.join(' ')} failed in ${cwd}: ${detail}${hint}`, { cause: error });
  }
}

/** Like {@link git}, but a failing command yields undefined: for questions answered by exit code. */
export async function tryGit(
  cwd: string,
  args: string[],
  options: GitOptions = {},
): Promise<string | undefined> {
  try {
    return await git(cwd, args, options);
  } catch {
    return undefined;
  }
}

/** The commit a revision names, or undefined when it names none. */
export async function resolveCommit(cwd: string, revision: string): Promise<string | undefined> {
  // A revision starting with '-' would be read as an option.
  if (revision.startsWith('-')) return undefined;
  const output = await tryGit(cwd, ['rev-parse', '--verify', '--quiet', `${revision}^{commit}`]);
  return output?.trim() || undefined;
}

/** Throws unless branch is a valid branch name (and cannot be read as an option). */
export async function assertBranchName(root: string, branch: string): Promise<void> {
  const isValid =
    !branch.startsWith('-') &&
    (await tryGit(root, ['check-ref-format', `refs/heads/${branch}`])) !== undefined;
  if (!isValid) throw new Error(`"${branch}" is not a valid git branch name.`);
}

const WORKER_NAME = 'delegate worker';
const WORKER_EMAIL = 'worker@delegate.invalid';

/** "delegate worker" unless the environment names someone; works without any git config. */
export function workerIdentity(): Record<string, string> {
  const env = process.env;
  const authorName = env.GIT_AUTHOR_NAME ?? WORKER_NAME;
  const authorEmail = env.GIT_AUTHOR_EMAIL ?? WORKER_EMAIL;
  return {
    GIT_AUTHOR_NAME: authorName,
    GIT_AUTHOR_EMAIL: authorEmail,
    GIT_COMMITTER_NAME: env.GIT_COMMITTER_NAME ?? authorName,
    GIT_COMMITTER_EMAIL: env.GIT_COMMITTER_EMAIL ?? authorEmail,
  };
}

export interface FileChange {
  /** One letter of `git diff --name-status`: A, M, D, T (type change). */
  status: string;
  /** Relative to the top of the repository. */
  path: string;
}

export interface ChangeFacts {
  filesChanged: FileChange[];
  diffstat: string;
}

/** Options that keep user config (colour, external diff tools, prefixes) out of the output. */
export const PLAIN_DIFF = ['--no-color', '--no-ext-diff', '--no-textconv'];

/**
 * Files changed and a diffstat between `from` and `to` (or the working tree when `to` is
 * absent). Renames are reported as a deletion plus an addition so each entry has one path.
 */
export async function diffFacts(
  cwd: string,
  revisions: string[],
  options: GitOptions = {},
): Promise<ChangeFacts> {
  const nameStatus = await git(
    cwd,
    ['diff', ...PLAIN_DIFF, '--no-renames', '--name-status', '-z', ...revisions, '--'],
    options,
  );
  const fields = nameStatus.split('\0');
  const filesChanged: FileChange[] = [];
  for (let index = 0; index + 1 < fields.length; index += 2) {
    const status = fields[index];
    const path = fields[index + 1];
    if (status && path !== undefined) filesChanged.push({ status, path });
  }
  const stat = await git(
    cwd,
    ['diff', ...PLAIN_DIFF, '--no-renames', '--stat', ...revisions, '--'],
    options,
  );
  return { filesChanged, diffstat: stat.trimEnd() };
}

/** Writes a patch that `git apply` takes whatever the user's diff settings are. */
export async function writePatch(cwd: string, revisions: string[], patchPath: string) {
  await git(cwd, [
    'diff',
    ...PLAIN_DIFF,
    '--binary',
    '--src-prefix=a/',
    '--dst-prefix=b/',
    `--output=${patchPath}`,
    ...revisions,
    '--',
  ]);
}
