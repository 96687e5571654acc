import { execFileSync } from 'node:child_process';
import { writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';

export const GIT_IDENTITY = {
  GIT_AUTHOR_NAME: 'test',
  GIT_AUTHOR_EMAIL: 'test@example.invalid',
  GIT_COMMITTER_NAME: 'test',
  GIT_COMMITTER_EMAIL: 'test@example.invalid',
};

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, ...GIT_IDENTITY },
  }).trim();
}

/** Makes `dir` a git repository on branch main with the given files committed. */
export function initRepository(dir: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', 'initial');
}

/** A tiny project with a failing test: add() subtracts. `node test.js` exits 0 once it is fixed. */
export const BROKEN_ADD_PROJECT = {
  'src/add.js': 'exports.add = (a, b) => a - b;\n',
  'test.js':
    "const { add } = require('./src/add.js');\nif (add(2, 3) !== 5) { console.error('add(2, 3) should be 5'); process.exit(1); }\nconsole.log('ok');\n",
};
export const FIXED_ADD = 'exports.add = (a, b) => a + b;\n';
