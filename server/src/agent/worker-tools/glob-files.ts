import type FastGlobModule from 'fast-glob';
import { isAbsolute, relative, sep } from 'node:path';
import { UserError } from '../../util/user-error.ts';

/** `.git` is a folder in a repository and a file in a worktree; neither is for the worker. */
const IGNORED = ['**/.git', '**/.git/**', '**/node_modules/**'];

/**
 * A glob made relative to `cwd`: an absolute pattern inside it loses its prefix; one outside
 * it, or one with a `..` segment, is refused (fast-glob would happily walk out).
 */
export function confinePattern(pattern: string, cwd: string, argument: string): string {
  let local = pattern;
  if (isAbsolute(pattern)) {
    const fromCwd = relative(cwd, pattern);
    if (fromCwd === '..' || fromCwd.startsWith(`..${sep}`) || isAbsolute(fromCwd)) {
      throw new UserError(
        `The ${argument} "${pattern}" points outside ${cwd}; use a relative pattern.`,
      );
    }
    local = fromCwd === '' ? '**' : fromCwd;
  }
  if (local.split(/[\\/]/).includes('..')) {
    throw new UserError(`The ${argument} "${pattern}" contains "..", which would leave ${cwd}.`);
  }
  return local;
}

/**
 * Files (not folders) matching `pattern` under `cwd`, absolute and sorted; `.git` and
 * `node_modules` skipped. Symlinks are not followed, so a link cannot lead the walk outside.
 */
export async function globFiles(
  pattern: string,
  cwd: string,
  options: { isBaseNameMatch?: boolean } = {},
): Promise<string[]> {
  const fastGlob = await loadFastGlob();
  const matches = await fastGlob(pattern, {
    cwd,
    absolute: true,
    dot: true,
    onlyFiles: true,
    followSymbolicLinks: false,
    suppressErrors: true,
    baseNameMatch: options.isBaseNameMatch ?? false,
    ignore: IGNORED,
  });
  return matches.sort();
}

type FastGlob = typeof FastGlobModule;

/** The glob library, loaded at the first search: a task worker's start does not wait for it. */
export async function loadFastGlob(): Promise<FastGlob> {
  return (await import('fast-glob')).default;
}
