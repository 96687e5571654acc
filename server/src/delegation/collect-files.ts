import { realpath, readFile, stat } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import fastGlob from 'fast-glob';
import { formatBytes } from '../util/format-bytes.ts';
import { UserError } from '../util/user-error.ts';

export interface CollectedFile {
  /** Real absolute path. */
  path: string;
  /** Path relative to the project, as the worker sees it. */
  display: string;
  bytes: number;
  text: string;
}

export const MAX_FILES = 200;
const BINARY_SNIFF_BYTES = 8_000;

/**
 * Resolves paths and globs to files under the project (symlinks resolved, so a link cannot
 * lead outside it), refuses binaries and anything over `capBytes` in total, and reads them.
 */
export async function collectFiles(
  entries: readonly string[],
  projectDir: string,
  capBytes: number,
): Promise<CollectedFile[]> {
  const root = await realpath(projectDir);
  const seen = new Map<string, string>();
  for (const [index, entry] of entries.entries()) {
    const label = `files[${index}] "${entry}"`;
    const candidates = fastGlob.isDynamicPattern(entry)
      ? await expandGlob(entry, projectDir, label)
      : [resolve(projectDir, entry)];
    for (const candidate of candidates) {
      const real = await confine(candidate, root, label);
      if (!seen.has(real)) seen.set(real, relative(root, real));
    }
  }
  if (seen.size > MAX_FILES) {
    throw new UserError(
      `The files match ${seen.size} files, over the limit of ${MAX_FILES} for one call. ` +
        'Narrow the globs, or split the work over several delegate calls.',
    );
  }
  const sized = await Promise.all(
    [...seen].map(async ([path, display]) => ({ path, display, bytes: (await stat(path)).size })),
  );
  const total = sized.reduce((sum, file) => sum + file.bytes, 0);
  if (total > capBytes) {
    const biggest = [...sized].sort((a, b) => b.bytes - a.bytes).slice(0, 3);
    throw new UserError(
      `The files total ${formatBytes(total)}, over the ${formatBytes(capBytes)} cap for one call ` +
        `(largest: ${biggest.map((file) => `${file.display} ${formatBytes(file.bytes)}`).join(', ')}). ` +
        'Split the work over several delegate calls, narrow the globs, or raise maxInputKb in the profile.',
    );
  }
  return Promise.all(
    sized.map(async (file) => ({ ...file, text: await readText(file.path, file.display) })),
  );
}

async function expandGlob(pattern: string, projectDir: string, label: string): Promise<string[]> {
  const matches = await fastGlob(pattern, {
    cwd: projectDir,
    absolute: true,
    onlyFiles: true,
    ignore: ['**/node_modules/**', '**/.git/**'],
  });
  if (matches.length === 0) {
    throw new UserError(`${label} matched no file under ${projectDir}. Check the pattern.`);
  }
  return matches.sort();
}

async function confine(candidate: string, root: string, label: string): Promise<string> {
  let real: string;
  try {
    real = await realpath(candidate);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT')
      throw new UserError(`${label} does not exist (looked for ${candidate}).`);
    throw new UserError(`${label} cannot be read: ${(error as Error).message}`);
  }
  const fromRoot = relative(root, real);
  if (fromRoot === '..' || fromRoot.startsWith(`..${sep}`) || isAbsolute(fromRoot)) {
    throw new UserError(
      `${label} resolves to ${real}, outside the project (${root}). Only files under the project can be sent.`,
    );
  }
  if ((await stat(real)).isDirectory()) {
    throw new UserError(
      `${label} is a directory. Name files, or use a glob such as "${fromRoot || '.'}/**/*.ts".`,
    );
  }
  return real;
}

async function readText(path: string, display: string): Promise<string> {
  const buffer = await readFile(path);
  if (buffer.subarray(0, BINARY_SNIFF_BYTES).includes(0)) {
    throw new UserError(
      `${display} looks binary (it contains NUL bytes); delegate sends text files only.`,
    );
  }
  return buffer.toString('utf8');
}
