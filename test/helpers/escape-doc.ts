import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as prettier from 'prettier';
import type { EscapeAttempt } from './escape-attempts.ts';
import type { GitAttempt } from './escape-git.ts';
import { REPO_ROOT } from './mcp-server.ts';

export const ESCAPE_DOC = join(REPO_ROOT, 'docs', 'sandbox.md');
/** The generated blocks of the doc, each with the test that writes it. */
const BLOCKS = {
  'escape-table': 'test/integration/sandbox-escapes.test.ts',
  'git-table': 'test/integration/git-escapes.test.ts',
} as const;
type Block = keyof typeof BLOCKS;

export interface EscapeOutcomes {
  sandboxed: Map<string, boolean>;
  unsandboxed: Map<string, boolean>;
  /** run_bash's output per attempt in the sandboxed run. */
  sandboxedOutput: Map<string, string>;
}

/** What stopped an attempt, in fixed words (outputs carry temp paths and ports). */
const STOPPED_BY: Array<[RegExp, string]> = [
  [/git guard:/, 'refused by the git guard'],
  [/Invalid cross-device link/, 'hard link refused across the mount'],
  [/remote rejected|Read-only file system/, 'read-only file system'],
  [/No such file or directory/, 'hidden: no such file'],
  [/Permission denied/, 'hidden: permission denied'],
  [/Operation not permitted/, 'socket refused (seccomp)'],
  [/Connection blocked by network allowlist/, 'proxy: not on the allowlist'],
  [/Connection refused|Couldn't connect/, 'no network: connection refused'],
  [/No such process/, 'not visible (own PID namespace)'],
];

function stoppedBy(attempt: EscapeAttempt, output: string | undefined): string {
  if (attempt.isControl) return 'allowed host, through the proxy';
  if (output === undefined) return 'see the rows above';
  return STOPPED_BY.find(([pattern]) => pattern.test(output))?.[1] ?? attempt.quietNote ?? '?';
}

/** The markdown table of attempts and what happened with and without the sandbox. */
export function renderEscapeTable(
  attempts: readonly EscapeAttempt[],
  outcomes: EscapeOutcomes,
): string {
  const cell = (attempt: EscapeAttempt, succeeded: boolean | undefined) =>
    attempt.isControl
      ? succeeded
        ? 'reached'
        : 'not reached'
      : succeeded
        ? '**escaped**'
        : 'blocked';
  const rows = attempts.map(
    (attempt, index) =>
      `| ${index + 1} | ${attempt.what} | \`${attempt.command.replaceAll('|', '\\|')}\` | ` +
      `${cell(attempt, outcomes.sandboxed.get(attempt.id))} | ` +
      `${stoppedBy(attempt, outcomes.sandboxedOutput.get(attempt.id))} | ` +
      `${cell(attempt, outcomes.unsandboxed.get(attempt.id))} |`,
  );
  return [
    '| # | attempt | command | sandbox on | how (sandbox on) | sandbox off |',
    '| - | ------- | ------- | ---------- | ---------------- | ----------- |',
    ...rows,
  ].join('\n');
}

/** One git attempt's result, judged on the host after the task and the user's later git. */
export interface GitOutcome {
  escaped: boolean;
  how: string;
  detail: unknown;
}

/** The git containment table: each attempt, with the sandbox and without it. */
export function renderGitTable(
  attempts: readonly GitAttempt[],
  outcomes: Record<'sandboxed' | 'unsandboxed', Map<string, GitOutcome>>,
): string {
  const cell = (outcome: GitOutcome | undefined) =>
    outcome === undefined ? 'not run' : outcome.escaped ? '**escaped**' : 'blocked';
  const rows = attempts.map((attempt, index) => {
    const on = outcomes.sandboxed.get(attempt.id);
    const off = outcomes.unsandboxed.get(attempt.id);
    return (
      `| ${index + 1} | ${attempt.route} | ${attempt.what} | ${attempt.isolation} | ` +
      `${cell(on)} | ${on?.how ?? ''} | ${cell(off)} | ${off?.how ?? ''} |`
    );
  });
  const blocked = (mode: 'sandboxed' | 'unsandboxed', of = attempts) =>
    of.filter((attempt) => outcomes[mode].get(attempt.id)?.escaped === false).length;
  const routes = [...new Set(attempts.map((attempt) => attempt.route))];
  const byRoute = routes.map((route) => {
    const of = attempts.filter((attempt) => attempt.route === route);
    return `| ${route} | ${of.length} | ${blocked('sandboxed', of)} | ${blocked('unsandboxed', of)} |`;
  });
  return [
    `${attempts.length} attempts: with the sandbox ${blocked('sandboxed')} blocked, ` +
      `without it (\`sandbox: "off"\`) ${blocked('unsandboxed')} blocked.`,
    '',
    '| class (route) | attempts | blocked, sandbox on | blocked, sandbox off |',
    '| ------------- | -------- | ------------------- | -------------------- |',
    ...byRoute,
    '',
    '| # | route | attempt | isolation | sandbox on | how (on) | sandbox off | how (off) |',
    '| - | ----- | ------- | --------- | ---------- | -------- | ----------- | --------- |',
    ...rows,
  ].join('\n');
}

/**
 * The doc as it is and as this run says it should be (the table put in its block, the file
 * formatted as `npm run lint` wants it). With DELEGATE_UPDATE_DOCS=1 the file is rewritten
 * first, so both match.
 */
export async function syncEscapeDoc(
  table: string,
  name: Block = 'escape-table',
): Promise<{ current: string; expected: string }> {
  const START = `<!-- ${name}:start (generated by ${BLOCKS[name]}) -->`;
  const END = `<!-- ${name}:end -->`;
  const current = readFileSync(ESCAPE_DOC, 'utf8');
  const start = current.indexOf(START);
  const end = current.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${ESCAPE_DOC} lacks the ${START} … ${END} block`);
  const block = `${START}\n\n${table}\n\n${END}`;
  const options = await prettier.resolveConfig(ESCAPE_DOC);
  const expected = await prettier.format(
    current.slice(0, start) + block + current.slice(end + END.length),
    { ...options, filepath: ESCAPE_DOC },
  );
  if (process.env.DELEGATE_UPDATE_DOCS === '1') {
    writeFileSync(ESCAPE_DOC, expected);
    return { current: expected, expected };
  }
  return { current, expected };
}
