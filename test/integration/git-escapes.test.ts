import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  GIT_ATTEMPTS,
  attemptReplies,
  type GitAttempt,
  type GitWorld,
} from '../helpers/escape-git.ts';
import { renderGitTable, syncEscapeDoc, type GitOutcome } from '../helpers/escape-doc.ts';
import { byAssistantTurn, startFakeProvider, type FakeProvider } from '../helpers/fake-provider.ts';
import { GIT_IDENTITY, initRepository } from '../helpers/git-project.ts';
import { startServer, type ServerHandle } from '../helpers/mcp-server.ts';
import { endTaskTest } from '../helpers/processes.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';
import { pollTaskStatus, taskIdOf } from '../helpers/wait.ts';
import { scaledMs } from '../helpers/timing.ts';

type Mode = 'sandboxed' | 'unsandboxed';
const outcomes: Record<Mode, Map<string, GitOutcome>> = {
  sandboxed: new Map(),
  unsandboxed: new Map(),
};

let current: { world: TempEnv; server?: ServerHandle; fake?: FakeProvider } | undefined;
afterEach(async () => {
  if (current) await endTaskTest(current.world, current.server, current.fake);
  current = undefined;
}, scaledMs(30_000));

/** The user's own git, as they would run it later: no hardening, their environment. */
function userGit(cwd: string, ...args: string[]): string | undefined {
  try {
    return execFileSync('git', args, {
      cwd,
      encoding: 'utf8',
      env: { ...process.env, ...GIT_IDENTITY },
      stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();
  } catch {
    return undefined;
  }
}

/** Every `.git` below dir other than its own, as `find` sees it. */
function nestedGitEntries(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const found = execFileSync('find', [dir, '-name', '.git', '-not', '-path', join(dir, '.git')], {
    encoding: 'utf8',
  });
  return found.split('\n').filter(Boolean);
}

/**
 * Git-shaped paths among `files` (paths relative to one folder): `.gitmodules`, `.git` in any
 * case, and folders holding `HEAD` beside `config`, `commondir`, `objects` or `refs` — the
 * test's own reading of what must never leave a task (a branch's tree, a folder's files).
 */
function gitShapedPaths(files: string[]): string[] {
  const found = new Set<string>();
  const byFolder = new Map<string, Set<string>>();
  for (const file of files) {
    const parts = file.split('/');
    for (const [index, part] of parts.entries()) {
      const folder = parts.slice(0, index).join('/') || '.';
      if (!byFolder.has(folder)) byFolder.set(folder, new Set());
      byFolder.get(folder)!.add(part.toLowerCase());
      if (['.gitmodules', '.git'].includes(part.toLowerCase())) found.add(file);
    }
  }
  for (const [folder, names] of byFolder) {
    const marks = ['config', 'commondir', 'objects', 'refs'].filter((name) => names.has(name));
    if (names.has('head') && marks.length > 0) found.add(folder);
  }
  return [...found].sort();
}

/** The files of a folder outside its own `.git`, relative to it. */
function filesOf(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const found = execFileSync('find', ['.', '-path', './.git', '-prune', '-o', '-print'], {
    cwd: dir,
    encoding: 'utf8',
  });
  return found
    .split('\n')
    .filter((line) => line.startsWith('./'))
    .map((line) => line.slice(2));
}

/** Why the attempt failed, from what its tool calls returned and how the task ended. */
function howStopped(outputs: string, error: string | undefined): string {
  const ways: string[] = [];
  if (/is git metadata \(\.git\)|outside the task directory/.test(outputs))
    ways.push('refused by the file tools');
  if (outputs.includes('git guard:')) ways.push('refused by the git guard');
  if (/Read-only file system|Device or resource busy/.test(outputs)) ways.push('read-only');
  if (error?.includes("git metadata in the worker's changes"))
    ways.push('found at the end: quarantined, failed');
  if (error?.includes('damaged the repository')) ways.push('found at the end: failed');
  return ways.join('; ') || '?';
}

/** An escape is not stopped; the task may still have reported what it found. */
const notStopped = (how: string) =>
  `not stopped (the shell runs as you)${how.startsWith('found') ? `; the task ${how.replace('found at the end: ', 'saw it: ')}` : ''}`;

async function runAttempt(attempt: GitAttempt, mode: Mode): Promise<GitOutcome> {
  const world = createTempEnv();
  current = { world };
  initRepository(world.project, { 'README.md': '# repo\n', 'pkg/a.txt': 'a\n' });
  const mainBefore = userGit(world.project, 'rev-parse', 'main');
  const hooksBefore = readdirSync(join(world.project, '.git', 'hooks')).sort();
  const gitWorld: GitWorld = { root: world.root, project: world.project };
  current.fake = await startFakeProvider({
    respond: byAssistantTurn(attemptReplies(attempt, gitWorld)),
  });
  world.writeConfig({
    sandbox: mode === 'sandboxed' ? 'required' : 'off',
    profiles: {
      w: { format: 'openai', baseUrl: current.fake.openaiBaseUrl, model: 'm', local: true },
    },
  });
  current.server = await startServer(world.env);
  const started = await current.server.callText('task_start', {
    task: 'Try to get git to run your code.',
    isolation: attempt.isolation,
    ...(attempt.workdir ? { workdir: attempt.workdir } : {}),
  });
  expect(started.isError, started.text).toBe(false);
  const id = taskIdOf(started.text);
  await pollTaskStatus(current.server, id, /done|failed|lost|timeout|cancelled/, 60_000);
  const job = JSON.parse(readFileSync(join(world.dataHome, 'jobs', id, 'job.json'), 'utf8'));
  // What reaches the user: the branch the task left (merged, as the user would) and the folder.
  const mainAfterTask = userGit(world.project, 'rev-parse', '--verify', 'main');
  const branch = `delegate/${id}`;
  const branchFiles = userGit(world.project, 'ls-tree', '-r', '--name-only', branch);

  const leftOnBranch = branchFiles === undefined ? [] : gitShapedPaths(branchFiles.split('\n'));
  if (branchFiles !== undefined) userGit(world.project, 'merge', '--no-ff', '-m', 'take', branch);
  const leftInPlace =
    attempt.isolation === 'none'
      ? gitShapedPaths(filesOf(world.project)).filter((path) => !path.startsWith('.git/'))
      : [];
  // What the user does later: look at the checkout, the kept worktree and their subfolders.
  const planted = ['pkg', 'sub', ...(attempt.places ?? [])];
  const places = [world.project, ...planted.map((place) => join(world.project, place))];
  if (job.worktreePath) {
    places.push(job.worktreePath, ...planted.map((place) => join(job.worktreePath, place)));
  }
  for (const place of places.filter((path) => existsSync(path))) {
    userGit(place, 'status');
    userGit(place, 'diff');
    userGit(place, 'add', '--dry-run', '--all');
  }
  const project = world.project;
  const ranOnHost = readdirSync(world.root).filter((name) => name.startsWith('ran-'));
  const damaged =
    mainAfterTask !== mainBefore ||
    userGit(project, 'symbolic-ref', 'HEAD') !== 'refs/heads/main' ||
    userGit(project, 'fsck', '--connectivity-only', '--no-dangling') === undefined;
  const redirected =
    userGit(project, 'rev-parse', '--absolute-git-dir') !== join(project, '.git') ||
    existsSync(join(project, '.git', 'commondir')) ||
    readFileSync(join(project, '.git', 'config'), 'utf8').includes('ran-') ||
    readdirSync(join(project, '.git', 'hooks'))
      .sort()
      .join() !== hooksBefore.join() ||
    nestedGitEntries(project).length > 0 ||
    (job.worktreePath !== undefined &&
      existsSync(job.worktreePath) &&
      (readFileSync(join(job.worktreePath, '.git'), 'utf8') !== job.git.pointer ||
        nestedGitEntries(job.worktreePath).length > 0));
  const outputs = JSON.stringify(current.fake.requests.at(-1)?.body?.messages ?? []);
  const escaped =
    ranOnHost.length > 0 ||
    damaged ||
    redirected ||
    leftOnBranch.length > 0 ||
    leftInPlace.length > 0;
  return {
    escaped,
    detail: {
      ranOnHost,
      damaged,
      redirected,
      leftOnBranch,
      leftInPlace,
      state: job.state,
      error: job.error,
    },
    how: escaped ? notStopped(howStopped(outputs, job.error)) : howStopped(outputs, job.error),
  };
}

describe.runIf(process.platform === 'linux')('the git containment table', () => {
  for (const mode of ['sandboxed', 'unsandboxed'] as const) {
    for (const attempt of GIT_ATTEMPTS) {
      it(`${mode}: ${attempt.id} — ${attempt.what}`, async () => {
        const outcome = await runAttempt(attempt, mode);
        outcomes[mode].set(attempt.id, outcome);
        const expected = mode === 'unsandboxed' && attempt.escapesUnsandboxed === true;
        expect(outcome.escaped, JSON.stringify(outcome)).toBe(expected);
      });
    }
  }

  it('docs/sandbox.md shows this table (DELEGATE_UPDATE_DOCS=1 rewrites it)', async () => {
    expect(outcomes.sandboxed.size).toBe(GIT_ATTEMPTS.length);
    expect(outcomes.unsandboxed.size).toBe(GIT_ATTEMPTS.length);
    const table = renderGitTable(GIT_ATTEMPTS, outcomes);
    const { current: doc, expected } = await syncEscapeDoc(table, 'git-table');
    expect(doc).toBe(expected);
  });
});
