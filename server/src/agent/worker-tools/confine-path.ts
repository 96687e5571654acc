import { lstat, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { UserError } from '../../util/user-error.ts';

/** A path argument checked to stay inside the task directory. */
export interface ConfinedPath {
  /** Real path of the task directory. */
  root: string;
  /** The path as the model named it, relative to the root ('.' for the root itself). */
  display: string;
  /**
   * Real absolute path: symlinks resolved; for a path that does not exist yet, its nearest
   * existing ancestor resolved plus the missing rest. Read and write this one.
   */
  real: string;
  /** `real` relative to the root. */
  relativeReal: string;
  exists: boolean;
}

/** A path relative to a root that leads out of it (`..`, or absolute elsewhere). */
export const isOutside = (fromRoot: string) =>
  fromRoot === '..' || fromRoot.startsWith(`..${sep}`) || isAbsolute(fromRoot);

/** A path (relative to the root) that is, or lies inside, a `.git` file or folder, in any case. */
export const isGitMetadata = (fromRoot: string) =>
  fromRoot.split(sep).some((part) => part.toLowerCase() === '.git');

/**
 * Resolves a path argument against the task directory and refuses it unless its real path
 * (symlinks followed, for the file or its nearest existing ancestor) stays inside: `..`,
 * absolute paths elsewhere and links leading out all fail with a message naming both. Git
 * metadata is refused too, as named or as a link resolves: the product's own git runs on the
 * host, so a worker that could write a `.git` (config, hooks, a pointer elsewhere) could make
 * it run code; and reading it can show a remote URL with a token in it.
 */
export async function confinePath(root: string, path: string): Promise<ConfinedPath> {
  if (path.includes('\0'))
    throw new UserError(`The path ${JSON.stringify(path)} contains a NUL byte.`);
  const realRoot = await realpath(root);
  const absolute = resolve(realRoot, path);
  const { real, exists } = await resolveReal(absolute, path);
  const relativeReal = relative(realRoot, real);
  const lexical = relative(realRoot, absolute);
  if (isOutside(relativeReal)) {
    const how = isOutside(lexical) ? 'resolves to' : 'leads through a symbolic link to';
    throw new UserError(
      `The path "${path}" ${how} ${real}, outside the task directory ${realRoot}. ` +
        'Only paths inside the task directory can be used (relative paths start there).',
    );
  }
  if (isGitMetadata(lexical) || isGitMetadata(relativeReal)) {
    throw new UserError(
      `The path "${path}" is git metadata (.git): workers may neither read nor write it. ` +
        'The work is committed to the task branch for you at the end; inspect the repository with run_bash (git status, git diff, git log).',
    );
  }
  const display = (isOutside(lexical) ? relativeReal : lexical) || '.';
  return { root: realRoot, display, real, relativeReal, exists };
}

async function resolveReal(absolute: string, path: string) {
  const missing: string[] = [];
  for (let current = absolute; ; current = dirname(current)) {
    try {
      const real = await realpath(current);
      return { real: join(real, ...missing.reverse()), exists: missing.length === 0 };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || dirname(current) === current) throw error;
      // realpath fails on a dangling link, which a write would follow wherever it points.
      if (await isPresent(current)) {
        throw new UserError(
          `The path "${path}" goes through ${current}, a symbolic link whose target does not exist; it is not followed.`,
        );
      }
      missing.push(basename(current));
    }
  }
}

async function isPresent(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}
