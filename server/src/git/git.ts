import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import type { PinnedRepository } from '../store/job-file.ts';
import { shellQuote } from '../util/shell-quote.ts';

const execFileAsync = promisify(execFile);

/** Patches and name lists of a big refactor exceed execFile's 1 MB default. */
const MAX_OUTPUT_BYTES = 256 * 1024 * 1024;

/**
 * Settings on every call, given on the command line (the highest precedence, and passed on to
 * every git the call starts, a nested repository's included) so that no configuration file can
 * make git run a command: no hooks, no fsmonitor, no ssh/editor/pager or credential helper,
 * no signing, no background maintenance, no transport; submodules are never entered (a
 * repository a worker planted below the task directory would run its own config), and no bare
 * repository is ever found by looking around (only one named with `--git-dir`). Diffs add
 * `--no-ext-diff --no-textconv` ({@link PLAIN_DIFF}). Paths stay unquoted for parsing (the
 * diffstat shown to the supervisor quotes them, see {@link diffFacts}).
 */
const HARDENED_CONFIG: ReadonlyArray<readonly [string, string]> = [
  ['core.hooksPath', '/dev/null'],
  ['core.fsmonitor', 'false'],
  ['core.sshCommand', 'false'],
  ['core.editor', 'false'],
  ['sequence.editor', 'false'],
  ['core.pager', 'cat'],
  ['credential.helper', ''],
  ['commit.gpgSign', 'false'],
  ['tag.gpgSign', 'false'],
  ['gc.auto', '0'],
  ['maintenance.auto', 'false'],
  ['submodule.recurse', 'false'],
  ['diff.ignoreSubmodules', 'all'],
  ['status.submoduleSummary', 'false'],
  ['protocol.allow', 'never'],
  ['core.quotePath', 'false'],
  // A folder shaped like a bare repository (any name, planted by a worker) is never one to us.
  ['safe.bareRepository', 'explicit'],
];
const HARDENED_ARGS = HARDENED_CONFIG.flatMap(([key, value]) => ['-c', `${key}=${value}`]);

/** The same settings as words of a shell command line, for git run on a runner over ssh. */
export const HARDENED_SHELL_ARGS = HARDENED_CONFIG.map(
  ([key, value]) => `-c ${shellQuote(`${key}=${value}`)}`,
).join(' ');

/** Config keys that {@link HARDENED_CONFIG} pins: tests check each against a planted config. */
export const HARDENED_KEYS = HARDENED_CONFIG.map(([key]) => key);

export interface GitOptions {
  /** Variables added for this call (identity, a scratch index). */
  env?: Record<string, string>;
  /** Run against this repository rather than the one git would find from cwd. */
  repository?: PinnedRepository;
  /** Kill git after this long (a bounded check); the call then fails. */
  timeoutMs?: number;
}

/**
 * git's environment: the server's, without every `GIT_*` variable (they can point git at
 * another repository or index, add configuration, or name programs to run), without system
 * configuration, and never prompting.
 */
function gitEnvironment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith('GIT_')) env[name] = value;
  }
  return { ...env, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0', ...extra };
}

function pinnedArgs(repository: PinnedRepository | undefined): string[] {
  return repository ? [`--git-dir=${repository.gitDir}`, `--work-tree=${repository.workTree}`] : [];
}

/** Runs `git <args>` in cwd (no shell) and returns stdout; a failure throws with git's stderr. */
export async function git(cwd: string, args: string[], options: GitOptions = {}): Promise<string> {
  try {
    const { stdout } = await execFileAsync(
      'git',
      [...HARDENED_ARGS, ...pinnedArgs(options.repository), ...args],
      {
        cwd,
        env: gitEnvironment(options.env),
        maxBuffer: MAX_OUTPUT_BYTES,
        encoding: 'utf8',
        ...(options.timeoutMs ? { timeout: options.timeoutMs, killSignal: 'SIGKILL' } : {}),
      },
    );
    return stdout;
  } catch (error) {
    const failure = error as NodeJS.ErrnoException & {
      stderr?: string;
      stdout?: string;
      killed?: boolean;
    };
    // Some commands report on stdout (git fsck's "missing blob …"): that, when stderr is empty.
    const detail = failure.killed
      ? `stopped after ${Math.round((options.timeoutMs ?? 0) / 1000)} s`
      : failure.stderr?.trim() || failure.stdout?.trim() || failure.message;
    const hint =
      failure.code === 'ENOENT' ? ' (is git installed and does the directory exist?)' : '';
    throw new Error(`git ${args.join(' ')} failed in ${cwd}: ${detail}${hint}`, { cause: error });
  }
}

/**
 * Like {@link git}, with bytes in and out: `input` on stdin, stdout returned whole (packs,
 * binary diffs). A failure throws with git's stderr.
 */
export function gitBytes(
  cwd: string,
  args: string[],
  options: GitOptions & { input?: Buffer } = {},
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', [...HARDENED_ARGS, ...pinnedArgs(options.repository), ...args], {
      cwd,
      env: gitEnvironment(options.env),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const chunks: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on(
      'data',
      (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4_000)),
    );
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? Buffer.alloc(0));
    child.once('error', (error) =>
      reject(new Error(`git ${args.join(' ')} could not start in ${cwd}: ${error.message}`)),
    );
    child.once('close', (code) =>
      code === 0
        ? resolve(Buffer.concat(chunks))
        : reject(
            new Error(`git ${args.join(' ')} failed in ${cwd}: ${stderr.trim() || `exit ${code}`}`),
          ),
    );
  });
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
export async function resolveCommit(
  cwd: string,
  revision: string,
  options: GitOptions = {},
): Promise<string | undefined> {
  // A revision starting with '-' would be read as an option.
  if (revision.startsWith('-')) return undefined;
  const output = await tryGit(
    cwd,
    ['rev-parse', '--verify', '--quiet', `${revision}^{commit}`],
    options,
  );
  return output?.trim() || undefined;
}

/**
 * Names git accepts by every rule of check-ref-format without asking it (a task's own
 * `delegate/t_abc123`): letters, digits, `_` and `-` in `/`-separated parts, none starting with
 * `-`. Anything else is asked of git.
 */
const PLAIN_BRANCH = /^[A-Za-z0-9_][A-Za-z0-9_-]*(?:\/[A-Za-z0-9_][A-Za-z0-9_-]*)*$/;

/** Throws unless branch is a valid branch name (and cannot be read as an option). */
export async function assertBranchName(root: string, branch: string): Promise<void> {
  const isValid =
    PLAIN_BRANCH.test(branch) ||
    (!branch.startsWith('-') &&
      (await tryGit(root, ['check-ref-format', `refs/heads/${branch}`])) !== undefined);
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

/** Files a diffstat lists (git adds a line of "..." and the totals for the rest). */
const DIFFSTAT_FILES = 100;

/** Options that keep user config (colour, external diff tools, prefixes) out of the output. */
export const PLAIN_DIFF = [
  '--no-color',
  '--no-ext-diff',
  '--no-textconv',
  '--ignore-submodules=all',
];

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
  // Shown to the supervisor as git shows it by default (names with control characters or other
  // than printable ASCII, such as a line separator, quoted and escaped), in bounded length.
  const stat = await git(
    cwd,
    [
      '-c',
      'core.quotePath=true',
      'diff',
      ...PLAIN_DIFF,
      '--no-renames',
      '--stat',
      `--stat-count=${DIFFSTAT_FILES}`,
      ...revisions,
      '--',
    ],
    options,
  );
  return { filesChanged, diffstat: stat.trimEnd() };
}

/** Writes a patch that `git apply` takes whatever the user's diff settings are. */
export async function writePatch(
  cwd: string,
  revisions: string[],
  patchPath: string,
  options: GitOptions = {},
) {
  await git(
    cwd,
    [
      'diff',
      ...PLAIN_DIFF,
      '--binary',
      '--src-prefix=a/',
      '--dst-prefix=b/',
      `--output=${patchPath}`,
      ...revisions,
      '--',
    ],
    options,
  );
}
