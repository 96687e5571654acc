// What the attempts bench checks besides its figures: task_result's text read defensively, the
// winner's branch, the losers' leftovers, and how long the task takes to end once one attempt won.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';

/**
 * `<id> <state> — verdict: <verdict>`, `cost: $<usd>` and the attempt lines
 * (`<id> <profile>: <state> [<verdict>] … · $<usd> — <outcome>`) of task_result's text.
 */
export function parseResult(text) {
  const head = /^t_[a-z0-9]+ (\w+)(?: — verdict: (\w+))?/.exec(text) ?? [];
  const cost = /^cost: \$([\d.]+)/m.exec(text)?.[1];
  const attempts = [];
  const line = /^\s+(t_[a-z0-9]+) (\S+): (\w+)(?: (\w+))?.* · \$([\d.]+) — (.*)$/gm;
  for (const match of text.matchAll(line)) {
    const [, id, profile, state, verdict, usd, outcome] = match;
    attempts.push({ id, profile, state, verdict: verdict ?? '', costUsd: Number(usd), outcome });
  }
  return {
    state: head[1] ?? '?',
    verdict: head[2] ?? '',
    costUsd: cost ? Number(cost) : NaN,
    attempts,
  };
}

/** answer.txt on the task's branch (named in task_result's merge line), or '' without one. */
export function branchAnswer(project, text) {
  const branch = /merge --no-ff (\S+)/.exec(text)?.[1];
  if (!branch) return '';
  try {
    return execFileSync('git', ['show', `${branch}:answer.txt`], { cwd: project, stdio: 'pipe' })
      .toString()
      .trim();
  } catch {
    return '';
  }
}

/**
 * Processes working under `dir` other than the server itself and its task host (it runs the
 * session's tasks, and waits for the next): workers or test commands that outlived their
 * task, as `pid command`.
 */
export function survivors(dir) {
  const found = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (!readlinkSync(`/proc/${pid}/cwd`).startsWith(dir)) continue;
      const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
      if (command.includes('dist/server.mjs') || command.includes('task-worker.mjs --host'))
        continue;
      found.push(`${pid} ${command.trim().slice(0, 80)}`);
    } catch {
      // Gone already, or not ours to read.
    }
  }
  return found;
}

/**
 * Attempt branches (`delegate/<task id>a<n>`) and worktrees not on their task's branch left in
 * the project: a loser's should go when its task ends; the winner's branch is renamed.
 */
export function loserLeftovers(project) {
  const git = (...args) => execFileSync('git', args, { cwd: project }).toString();
  const branches = git('branch', '--format=%(refname:short)')
    .split('\n')
    .filter((branch) => /^delegate\/t_[a-z0-9]{6}a\d$/.test(branch));
  const worktrees = git('worktree', 'list', '--porcelain')
    .split('\n\n')
    .filter((entry) => {
      const path = /^worktree (.*)$/m.exec(entry)?.[1] ?? '';
      const task = /(t_[a-z0-9]{6})a\d$/.exec(path)?.[1];
      return task && !new RegExp(`^branch refs/heads/delegate/${task}$`, 'm').test(entry);
    });
  return [...branches, ...worktrees.map((entry) => entry.split('\n')[0])];
}

/** USD per task id in the product's ledger (every call of every attempt is a line there). */
export function ledgerUsdByTask(dataHome) {
  const usd = new Map();
  const dir = join(dataHome, 'ledger');
  for (const file of readdirSync(dir)) {
    for (const line of readFileSync(join(dir, file), 'utf8').trim().split('\n')) {
      const record = JSON.parse(line);
      if (record.taskId) usd.set(record.taskId, (usd.get(record.taskId) ?? 0) + record.costUsd);
    }
  }
  return usd;
}

function events(dataHome, id) {
  try {
    return readFileSync(join(dataHome, 'jobs', id, 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
  } catch {
    return [];
  }
}

/**
 * Milliseconds from the winning attempt's end to its task's end, from the events the product
 * writes in the data home (task_result does not carry times); undefined without a winner.
 */
export function settleMs(dataHome, id) {
  const ended = events(dataHome, id).find(
    (event) => event.type === 'state' && / won$/.test(event.detail),
  );
  const winner = /^\w+: (t_[a-z0-9]+) won$/.exec(ended?.detail ?? '')?.[1];
  if (!winner) return undefined;
  const won = events(dataHome, winner).find(
    (event) => event.type === 'state' && event.detail.startsWith('done'),
  );
  return won ? Date.parse(ended.ts) - Date.parse(won.ts) : undefined;
}
