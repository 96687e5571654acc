/**
 * A task's commands on a runner. The task's files stay in its worktree on this machine, where
 * the worker's file tools read and write them; each command (run_bash, the test command) runs
 * in the task's checkout on the runner, with git carrying the files both ways:
 *
 * - before it, a snapshot commit of the worktree goes over as a thin pack (when it changed),
 *   and the runner's checkout is reset and cleaned to exactly it (files the worktree deleted
 *   go too, and anything an earlier command left untracked; ignored files the runner made,
 *   such as dependencies and build output, stay there);
 * - after it, the runner commits what the command changed, that commit comes back as a pack
 *   (checked with `index-pack --strict`), and its diff is applied to the worktree. Every git
 *   step there is checked: a failure, or a repository the command made inside the checkout,
 *   ends the task `failed` with git's words, so no change is lost in silence and no later test
 *   there judges files that did not come back.
 *
 * Git on this machine never talks to the runner: every exchange is a command over ssh with
 * bytes on stdin or stdout. The snapshots form a chain of their own (no project history goes
 * over), recorded in the job folder, so each exchange carries only what changed.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { HARDENED_SHELL_ARGS, PLAIN_DIFF, git, gitBytes, workerIdentity } from '../git/git.ts';
import type { JobFile, PinnedRepository, RecordedRunner } from '../store/job-file.ts';
import type { ResourceLimits } from '../config/resource-limits.ts';
import { jobDir } from '../store/job-store.ts';
import { shellQuote } from '../util/shell-quote.ts';
import { errorMessage, TaskError } from '../util/user-error.ts';
import { runSsh, sshFailure, sshFailureError, type SshOptions, type SshResult } from './ssh.ts';

/** What a command on the runner needs from this machine. */
export interface RemoteTask {
  id: string;
  runner: RecordedRunner;
  /** The task's worktree here. */
  repository: PinnedRepository;
  /** Where commands start, relative to the checkout ('' for its top). */
  subdir: string;
  /** The task's job folder (sync state, scratch index). */
  jobFolder: string;
  /** Per-command limits, applied in the runner's sandbox as they are here. */
  limits?: ResourceLimits;
  dataHome: string;
  env: Record<string, string | undefined>;
}

export type RemoteEnding = 'exited' | 'timed-out' | 'aborted' | 'dropped';

export interface RemoteOutcome {
  exitCode: number | null;
  ending: RemoteEnding;
  /** Processes the command left behind were killed when it ended. */
  hadLeftovers: boolean;
  /** Paths (relative to the worktree) the command changed, now changed here too. */
  filesChanged: string[];
}

/** Ends a task's run on the runner: it is gone, after retries; the task ends `lost`. */
export class RunnerGoneError extends TaskError {
  constructor(message: string) {
    super(message, 'lost');
  }
}

/** Waits between tries of a dropped connection; `DELEGATE_RUNNER_RETRY_MS` scales them (tests). */
const RETRY_STEPS = [1, 2, 4, 8, 16];
/** After a kill, how long the command's own ssh gets to report before it is cut. */
const KILL_GRACE_MS = 10_000;
const SYNC_FILE = 'runner-sync.json';
/** A commit as the runner names it: a hash, since it becomes an argument of git here. */
const COMMIT_HASH = '[0-9a-f]{40}|[0-9a-f]{64}';
/**
 * What a command's closing line says of its changes: the commit holding them, `-` when it
 * changed nothing, `!` when a git step there failed (git's words are in `$W/git-error`).
 */
const CHANGES = `${COMMIT_HASH}|-|!`;
const GIT_ERROR_FILE = 'git-error';

interface SyncState {
  commit: string;
  tree: string;
}

/** git on the runner, with the same hardening as here: no config there can make it run a program. */
const REMOTE_GIT = `GIT_CONFIG_NOSYSTEM=1 git ${HARDENED_SHELL_ARGS}`;

/** Shell lines that enter the task's checkout and define `g`, hardened git. */
function prelude(task: RemoteTask): string {
  return [
    `W=${shellQuote(task.runner.taskDir)}`,
    `g() { ${REMOTE_GIT} "$@"; }`,
    'cd "$W/tree" || exit 97',
  ].join('\n');
}

/**
 * Runs a step on the runner; a dropped or refused connection is tried again with backoff, and
 * a runner still unreachable after that throws {@link RunnerGoneError}. Host-key and login
 * refusals throw at once, with what to do.
 */
async function onRunner(
  task: RemoteTask,
  script: string,
  options: SshOptions = {},
): Promise<SshResult> {
  const scale = Number(task.env.DELEGATE_RUNNER_RETRY_MS) || 1_000;
  for (let attempt = 0; ; attempt += 1) {
    const result = await runSsh(task.runner, script, task, options);
    const failure = sshFailure(result);
    if (!failure) return result;
    // A host key that changed, or a login refused, mid-task: the task ends, nothing more runs there.
    if (failure !== 'connection') {
      throw new TaskError(
        (await sshFailureError(task.runner, failure, result, task.env)).message,
        'failed',
      );
    }
    options.signal?.throwIfAborted();
    const wait = RETRY_STEPS[attempt];
    if (wait === undefined) {
      throw new RunnerGoneError(
        `runner "${task.runner.name}" (${task.runner.host}) is unreachable: ${result.stderr.trim().split('\n').pop() ?? 'ssh failed'}; ` +
          `tried ${RETRY_STEPS.length + 1} times over ${RETRY_STEPS.reduce((a, b) => a + b, 0) * (scale / 1000)} s`,
      );
    }
    await sleep(wait * scale, undefined, options.signal ? { signal: options.signal } : {});
  }
}

function checked(result: SshResult, what: string): Buffer {
  if (result.code !== 0) {
    throw new Error(
      `${what} failed on the runner (exit ${result.code}): ${result.stderr.trim().slice(-500)}`,
    );
  }
  return result.stdout;
}

function readSyncState(task: RemoteTask): SyncState | undefined {
  const path = join(task.jobFolder, SYNC_FILE);
  if (!existsSync(path)) return undefined;
  const state = JSON.parse(readFileSync(path, 'utf8')) as Partial<SyncState>;
  return typeof state.commit === 'string' && typeof state.tree === 'string'
    ? { commit: state.commit, tree: state.tree }
    : undefined;
}

function writeSyncState(task: RemoteTask, state: SyncState): void {
  writeFileSync(join(task.jobFolder, SYNC_FILE), `${JSON.stringify(state)}\n`);
}

/** The worktree's files as a tree (untracked files in, ignored ones out), through a scratch index. */
async function worktreeTree(task: RemoteTask): Promise<string> {
  const options = {
    repository: task.repository,
    env: { GIT_INDEX_FILE: join(task.jobFolder, 'runner.index') },
  };
  await git(task.repository.workTree, ['add', '--all'], options);
  return (await git(task.repository.workTree, ['write-tree'], options)).trim();
}

/** Sends the worktree's files to the runner's checkout, unless it holds them already. */
async function pushFiles(task: RemoteTask, signal?: AbortSignal): Promise<SyncState> {
  const last = readSyncState(task);
  const tree = await worktreeTree(task);
  if (last?.tree === tree) return last;
  const cwd = task.repository.workTree;
  const options = { repository: task.repository, env: workerIdentity() };
  const parent = last ? ['-p', last.commit] : [];
  const commit = (
    await git(
      cwd,
      ['commit-tree', tree, ...parent, '-m', 'delegate: files for the runner'],
      options,
    )
  ).trim();
  const send = async (base: SyncState | undefined) => {
    const revisions = `${commit}\n${base ? `^${base.commit}\n` : ''}`;
    // A whole snapshot has nothing on the runner to be a delta against: no delta search (it
    // took most of a first exchange's time, measured in bench/runners.mjs).
    const window = base ? [] : ['--window=0'];
    const pack = await gitBytes(
      cwd,
      ['pack-objects', '--revs', '--thin', ...window, '--stdout', '-q'],
      { ...options, input: Buffer.from(revisions) },
    );
    const script = [
      `W=${shellQuote(task.runner.taskDir)}`,
      // The task's folder is made by its first exchange: an empty checkout and a tmp folder.
      `mkdir -p "$W/tmp" && { [ -d "$W/tree/.git" ] || ${REMOTE_GIT} init -q "$W/tree"; } || exit 94`,
      prelude(task),
      // The command's own script checks the files out (see commandScript).
      'g index-pack --stdin --fix-thin --strict >/dev/null || exit 96',
    ].join('\n');
    return onRunner(task, script, { input: pack, ...(signal ? { signal } : {}) });
  };
  let result = await send(last);
  // The runner lost the chain (its folder was removed): the whole snapshot goes again.
  if (result.code === 96 && last) result = await send(undefined);
  checked(result, 'receiving the files');
  const state = { commit, tree };
  writeSyncState(task, state);
  return state;
}

/** Brings `commit` (made on the runner on top of `base`) here, and applies its changes to the worktree. */
async function pullFiles(task: RemoteTask, base: SyncState, commit: string): Promise<string[]> {
  const script = [
    prelude(task),
    `printf '%s\\n^%s\\n' ${commit} ${base.commit} | g pack-objects --revs --thin --stdout -q`,
  ].join('\n');
  const pack = checked(await onRunner(task, script), 'sending the changes');
  const cwd = task.repository.workTree;
  const options = { repository: task.repository };
  // --strict: a tree with a `.git` entry or a bad path is refused before anything is applied.
  await gitBytes(cwd, ['index-pack', '--stdin', '--fix-thin', '--strict'], {
    ...options,
    input: pack,
  });
  const tree = (await git(cwd, ['rev-parse', `${commit}^{tree}`], options)).trim();
  const names = await git(
    cwd,
    ['diff', ...PLAIN_DIFF, '--no-renames', '--name-only', '-z', base.commit, commit, '--'],
    options,
  );
  const diff = await gitBytes(
    cwd,
    ['diff', ...PLAIN_DIFF, '--no-renames', '--binary', base.commit, commit, '--'],
    options,
  );
  if (diff.length > 0) {
    await gitBytes(cwd, ['apply', '--whitespace=nowarn', '-'], { ...options, input: diff });
  }
  writeSyncState(task, { commit, tree });
  return names.split('\0').filter(Boolean);
}

/** A task's commands on its runner, or undefined for a task that runs them here. */
export function remoteTaskOf(
  job: Pick<JobFile, 'id' | 'runner' | 'git' | 'workdir' | 'limits'>,
  dataHome: string,
  env: Record<string, string | undefined>,
): RemoteTask | undefined {
  if (!job.runner) return undefined;
  if (!job.git) throw new Error(`task ${job.id} has a runner but no git checkout`);
  return {
    id: job.id,
    runner: job.runner,
    repository: { gitDir: job.git.gitDir, workTree: job.git.workTree },
    subdir: relative(job.git.workTree, job.workdir),
    jobFolder: jobDir(dataHome, job.id),
    ...(job.limits ? { limits: job.limits } : {}),
    dataHome,
    env,
  };
}

/**
 * Shell lines that kill the command running in `$W` with everything it started (`stopped=1`
 * when one was running): twice, as a command may be between its start and writing its
 * process group down.
 */
const KILL_COMMAND_LINES = [
  'stopped=0',
  'for i in 1 2; do p=$(cat "$W/run.pid" 2>/dev/null) && kill -s KILL -- "-$p" 2>/dev/null && stopped=1; sleep 0.3; done',
];

/** Kills the command running in the task's folder on the runner, with everything it started. */
export async function killRemoteCommand(
  task: Pick<RemoteTask, 'runner' | 'dataHome' | 'env'>,
): Promise<void> {
  const script = [`W=${shellQuote(task.runner.taskDir)}`, ...KILL_COMMAND_LINES, 'exit 0'].join(
    '\n',
  );
  await runSsh(task.runner, script, task, { timeoutMs: 20_000 });
}

/** Removes the task's folder on the runner. */
export async function removeRemoteTask(
  task: Pick<RemoteTask, 'runner' | 'dataHome' | 'env'>,
): Promise<void> {
  await killRemoteCommand(task);
  const result = await runSsh(task.runner, `rm -rf ${shellQuote(task.runner.taskDir)}`, task, {
    timeoutMs: 60_000,
  });
  if (result.code !== 0) {
    throw new Error(
      `could not remove ${task.runner.taskDir} on runner "${task.runner.name}": ${result.stderr.trim().slice(-300)}`,
    );
  }
}

/** The command as the runner runs it: in bubblewrap when the task is sandboxed. */
function launcher(task: RemoteTask, command: string): string {
  const shell = task.runner.shell;
  if (!task.runner.sandboxed) {
    return `env TMPDIR="$W/tmp" ${shell} -c ${shellQuote(`exec 2>&1; ${command}`)}`;
  }
  // As here: soft and hard, so the command cannot raise them (dash names the process count -p).
  const limits = task.limits
    ? `{ ulimit -u ${task.limits.processes} || ulimit -p ${task.limits.processes}; } 2>/dev/null; ` +
      `ulimit -d ${task.limits.memoryMb * 1024} 2>/dev/null; `
    : '';
  const line = shellQuote(`exec 2>&1; ${limits}${command}`);
  // Inside, the checkout is writable but its .git is not, and nothing else is but tmp.
  return [
    'bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp',
    '--bind "$W/tree" "$W/tree" --ro-bind "$W/tree/.git" "$W/tree/.git" --bind "$W/tmp" "$W/tmp"',
    '--unshare-all --die-with-parent --new-session --chdir "$PWD" --setenv TMPDIR "$W/tmp"',
    `-- ${shell} -c ${line}`,
  ].join(' ');
}

/**
 * The script that runs `command` there, then commits its changes and prints the closing line.
 * The closing line is also written to `$W/ended` before it is printed, and the script's pid is
 * in `$W/script.pid` until then: a connection that drops while it runs loses neither the exit
 * code nor the changes (see {@link afterDrop}).
 */
function commandScript(task: RemoteTask, command: string, base: SyncState, nonce: string): string {
  return [
    prelude(task),
    'echo "$$" > "$W/script.pid"',
    `rm -f "$W/${GIT_ERROR_FILE}"`,
    // The command starts from exactly the worktree's files (ignored ones aside): whatever an
    // earlier command left there untracked goes, so no test judges files that did not come back.
    `if ! e=$({ g reset -q --hard ${base.commit} && g clean -ffdq; } 2>&1); then`,
    `  printf 'checking out the files on the runner failed: %s\\n' "$e" > "$W/${GIT_ERROR_FILE}"`,
    `  printf '${nonce} 0 0 !\\n' > "$W/ended"; rm -f "$W/script.pid"; printf '\\n'; cat "$W/ended"; exit 0`,
    'fi',
    // From here on the checkout is the command's: a recovery may commit what it holds.
    `echo ${nonce} > "$W/started"`,
    ...(task.subdir ? [`cd ./${shellQuote(task.subdir)} || exit 97`] : []),
    // Its own process group, so it can be killed whole: setsid, else bash's job control.
    'if command -v setsid >/dev/null 2>&1; then S=setsid; else S=; set -m; fi',
    `$S ${launcher(task, command)} </dev/null 2>&1 &`,
    'pid=$!',
    'echo "$pid" > "$W/run.pid"',
    'wait "$pid"; rc=$?',
    'left=0',
    'if kill -0 -- "-$pid" 2>/dev/null; then left=1; kill -s KILL -- "-$pid" 2>/dev/null; fi',
    'rm -f "$W/run.pid"',
    ...snapshotLines(base),
    `printf '${nonce} %s %s %s\\n' "$rc" "$left" "$c" > "$W/ended"`,
    'rm -f "$W/script.pid"',
    `printf '\\n'; cat "$W/ended"`,
  ].join('\n');
}

/**
 * Runs `command` in the task's checkout on the runner (stdin closed, its own process group,
 * whatever it leaves behind killed when it ends), the worktree's files sent first and the
 * command's changes brought back after. Output streams to `onOutput`. A timeout or abort kills
 * it on the runner; a connection lost while it ran stops it there once the runner answers again.
 */
export async function runRemoteCommand(
  task: RemoteTask,
  command: string,
  options: {
    timeoutMs: number;
    signal?: AbortSignal;
    onOutput: (chunk: Buffer) => void;
    onStart?: (pgid: number) => void;
  },
): Promise<RemoteOutcome> {
  const base = await pushFiles(task, options.signal);
  const nonce = randomBytes(12).toString('hex');
  const script = commandScript(task, command, base, nonce);
  const state: { ending: RemoteEnding } = { ending: 'exited' };
  const splitter = trailerSplitter(nonce, options.onOutput);
  let killed: Promise<void> | undefined;
  // The command's own ssh reports once the kill lands; if the connection is gone, it is cut.
  const cut = new AbortController();
  let graceTimer: NodeJS.Timeout | undefined;
  const stop = (ending: RemoteEnding) => {
    if (killed) return;
    state.ending = ending;
    killed = killRemoteCommand(task);
    graceTimer = setTimeout(() => cut.abort(), KILL_GRACE_MS);
  };
  const timer = setTimeout(() => stop('timed-out'), options.timeoutMs);
  const onAbort = () => stop('aborted');
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await runSsh(task.runner, script, task, {
      onStdout: (chunk) => splitter.push(chunk),
      signal: cut.signal,
      ...(options.onStart ? { onStart: options.onStart } : {}),
    });
    await killed;
  } finally {
    clearTimeout(timer);
    clearTimeout(graceTimer);
    options.signal?.removeEventListener('abort', onAbort);
  }
  const trailer = splitter.end();
  if (!trailer) {
    const recovered = await afterDrop(task, base, nonce);
    // A command that ended on its own before the drop keeps its exit code; one stopped has none.
    const endedAlone = state.ending === 'exited' && !recovered.stopped;
    return {
      exitCode: endedAlone ? recovered.exitCode : null,
      ending: state.ending === 'exited' ? 'dropped' : state.ending,
      hadLeftovers: false,
      filesChanged: recovered.filesChanged,
    };
  }
  const filesChanged = await bringBack(task, base, trailer.commit);
  return {
    exitCode: trailer.exitCode,
    ending: state.ending,
    hadLeftovers: state.ending === 'exited' && trailer.hadLeftovers,
    filesChanged,
  };
}

/** How long, after a drop, the command's own script gets there to record how it ended. */
const RECORD_WAIT_TENTHS = 600;

/**
 * The connection went while a command ran (or it was cut after a kill): once the runner answers
 * again, the command is stopped there (`stopped`: it was still running) and what it changed
 * comes back. The command's own script, cut off from us but still running there, is let finish
 * recording its ending (exit code and commit); only a script that never finishes is killed and
 * the changes committed by this recovery (none when the command had not started: its checkout
 * may be half reset), which then takes the script's place (its pid, its
 * record) — so two git processes never share the checkout's index, and a recovery cut off in
 * turn is finished, or read back, by the next try.
 */
async function afterDrop(
  task: RemoteTask,
  base: SyncState,
  nonce: string,
): Promise<{ stopped: boolean; exitCode: number | null; filesChanged: string[] }> {
  const script = [
    prelude(task),
    ...KILL_COMMAND_LINES,
    'alive() { s=$(cat "$W/script.pid" 2>/dev/null) && kill -0 "$s" 2>/dev/null; }',
    `i=0; while alive && [ $i -lt ${RECORD_WAIT_TENTHS} ]; do sleep 0.1; i=$((i + 1)); done`,
    // A record of this command: its script's (an exit code) or an earlier recovery's ("-").
    `if read -r n rc left c < "$W/ended" 2>/dev/null && [ "$n" = ${nonce} ]; then`,
    '  [ "$rc" != - ] || stopped=$left; echo "$stopped $rc $c"; exit 0',
    'fi',
    'if alive; then kill -s KILL "$s" 2>/dev/null; sleep 0.1; fi',
    // Cut off before the command started (its checkout half reset, say): it changed nothing.
    `[ "$(cat "$W/started" 2>/dev/null)" = ${nonce} ] || { echo "$stopped - -"; exit 0; }`,
    'echo "$$" > "$W/script.pid"',
    `rm -f .git/index.lock "$W/${GIT_ERROR_FILE}"`,
    ...(task.env.DELEGATE_RUNNER_RECOVERY_PAUSE_FOR_TEST
      ? [`sleep ${Number(task.env.DELEGATE_RUNNER_RECOVERY_PAUSE_FOR_TEST) || 0}`]
      : []),
    ...snapshotLines(base),
    `printf '${nonce} - %s %s\\n' "$stopped" "$c" > "$W/ended"`,
    'rm -f "$W/script.pid"',
    'echo "$stopped - $c"',
  ].join('\n');
  // The first try is the one that waits for the runner to answer again.
  const answer = checked(await onRunner(task, script), 'collecting the changes')
    .toString()
    .trim();
  const match = new RegExp(`^([01]) (\\d+|-) (${CHANGES})$`).exec(answer);
  if (!match)
    throw new Error(`collecting the changes on the runner gave "${answer.slice(0, 200)}"`);
  return {
    stopped: match[1] === '1',
    exitCode: match[2] === '-' ? null : Number(match[2]),
    filesChanged: await bringBack(task, base, match[3]!),
  };
}

/**
 * A command's changes, from its closing line: none (`-`), the commit holding them brought here
 * and applied, or — a git step there failed (`!`) — the task ends `failed` with git's words:
 * work that could not come back is never passed over in silence, and no test there judges it.
 */
async function bringBack(task: RemoteTask, base: SyncState, changes: string): Promise<string[]> {
  if (changes === '-') return [];
  if (changes === '!') {
    const why = await onRunner(
      task,
      `cat ${shellQuote(`${task.runner.taskDir}/${GIT_ERROR_FILE}`)}`,
    );
    const words = why.stdout.toString().trim().slice(0, 1_500) || 'no words from git';
    throw new TaskError(
      `${words}. The command's changes on runner "${task.runner.name}" could not be brought back, so the task stops; the work done before it is in the worktree.`,
      'failed',
    );
  }
  try {
    return await pullFiles(task, base, changes);
  } catch (error) {
    if (error instanceof TaskError) throw error;
    throw new TaskError(
      `bringing the command's changes back from runner "${task.runner.name}" failed: ${errorMessage(error)}`,
      'failed',
    );
  }
}

/**
 * Shell lines that commit what changed in the checkout since `base` (to `$c`; `-` when nothing
 * did). Every git step is checked: when one fails, or the checkout holds a repository of its own
 * (a `.git` below its top, any case: git would leave its files behind, or take a gitlink for
 * them), `$c` is `!` and what went wrong is in `$W/git-error` — the changes are never dropped
 * in silence.
 */
function snapshotLines(base: SyncState): string[] {
  const fail = (what: string) =>
    `{ printf '%s: %s\\n' ${shellQuote(what)} "$e" > "$W/${GIT_ERROR_FILE}"; c='!'; }`;
  const identity =
    'GIT_AUTHOR_NAME=delegate GIT_AUTHOR_EMAIL=worker@delegate.invalid GIT_COMMITTER_NAME=delegate GIT_COMMITTER_EMAIL=worker@delegate.invalid';
  return [
    'c=-',
    'e=$(cd "$W/tree" && find . -path ./.git -prune -o -iname .git -print 2>/dev/null | head -n 20 | tr "\\n" " ")',
    `if [ -n "$e" ]; then ${fail("git metadata in the worker's changes on the runner (a repository inside the checkout)")}`,
    `elif ! e=$(g add --all 2>&1 >/dev/null); then ${fail('git add failed on the runner')}`,
    `elif ! t=$(g write-tree 2>&1); then e=$t; ${fail('git write-tree failed on the runner')}`,
    `elif [ "$t" != ${base.tree} ]; then`,
    `  if ! c=$(${identity} g commit-tree "$t" -p ${base.commit} -m 'delegate: changes on the runner' </dev/null 2>&1); then e=$c; ${fail('git commit-tree failed on the runner')}; fi`,
    'fi',
  ];
}

interface Trailer {
  exitCode: number;
  hadLeftovers: boolean;
  commit: string;
}

/**
 * Passes output on, holding back its last bytes, where the script's closing line (the nonce,
 * the exit code, leftovers, the commit) is taken off.
 */
function trailerSplitter(nonce: string, onOutput: (chunk: Buffer) => void) {
  const HOLD = 256;
  let held = Buffer.alloc(0);
  return {
    push(chunk: Buffer) {
      held = Buffer.concat([held, chunk]);
      if (held.length > HOLD) {
        onOutput(held.subarray(0, held.length - HOLD));
        held = held.subarray(held.length - HOLD);
      }
    },
    end(): Trailer | undefined {
      const text = held.toString('latin1');
      const at = text.lastIndexOf(`\n${nonce} `);
      const match =
        at < 0
          ? null
          : new RegExp(`^\\n${nonce} (\\d+) ([01]) (${CHANGES})\\n$`).exec(text.slice(at));
      if (!match) {
        if (held.length) onOutput(held);
        return undefined;
      }
      if (at > 0) onOutput(held.subarray(0, at));
      return { exitCode: Number(match[1]), hadLeftovers: match[2] === '1', commit: match[3]! };
    },
  };
}
