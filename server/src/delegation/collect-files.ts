import { realpath, stat } from 'node:fs/promises';
import { relative, resolve, sep } from 'node:path';
import fastGlob from 'fast-glob';
import { isGitMetadata, isOutside } from '../agent/worker-tools/confine-path.ts';
import { formatBytes } from '../util/format-bytes.ts';
import { ownFolderProblem } from '../util/own-folder.ts';
import { readRegularFile, specialKind } from '../util/regular-file.ts';
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
 * lead outside it) or, by absolute path, to big tool outputs the output guard saved in
 * `savedOutputsDir` (when it is a real folder of the user's, as the guard saves only there); refuses binaries and anything over `capBytes` in total, and reads them.
 */
export async function collectFiles(
  entries: readonly string[],
  projectDir: string,
  capBytes: number,
  savedOutputsDir?: string,
): Promise<CollectedFile[]> {
  const root = await realpath(projectDir);
  // Saved outputs only from the guard's own real folder: a link there could open any folder.
  const outputs =
    savedOutputsDir && !ownFolderProblem(savedOutputsDir)
      ? await realpath(savedOutputsDir).catch(() => undefined)
      : undefined;
  const seen = new Map<string, string>();
  for (const [index, entry] of entries.entries()) {
    const label = `files[${index}] ${JSON.stringify(entry)}`;
    if (entry.includes('\0')) {
      throw new UserError(`${label} contains a NUL byte; name a file by its path.`);
    }
    const candidates = fastGlob.isDynamicPattern(entry)
      ? await expandGlob(entry, projectDir, label)
      : [resolve(projectDir, entry)];
    for (const candidate of candidates) {
      const real = await confine(candidate, { root, projectDir, outputs }, label);
      if (!seen.has(real)) seen.set(real, displayPath(real, root, outputs));
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
    sized.map(async (file) => ({
      ...file,
      text: await readText(file.path, `files: ${file.display}`),
    })),
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

/** Where a file is, as the worker sees it: under the project, or `saved-outputs/<name>`. */
function displayPath(real: string, root: string, outputs: string | undefined): string {
  const fromRoot = relative(root, real);
  if (!isOutside(fromRoot) || !outputs) return fromRoot;
  return `saved-outputs/${relative(outputs, real)}`;
}

/** A saved output of the output guard: directly in its folder (the user's own command output). */
function isSavedOutput(real: string, outputs: string | undefined): boolean {
  if (!outputs) return false;
  const fromOutputs = relative(outputs, real);
  return !isOutside(fromOutputs) && fromOutputs !== '' && !fromOutputs.includes(sep);
}

async function confine(
  candidate: string,
  { root, projectDir, outputs }: { root: string; projectDir: string; outputs: string | undefined },
  label: string,
): Promise<string> {
  let real: string;
  try {
    real = await realpath(candidate);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT')
      throw new UserError(
        `${label} does not exist (looked for ${candidate}). Check the path; relative paths start at the project.`,
      );
    throw new UserError(`${label} cannot be read: ${(error as Error).message}`);
  }
  const fromRoot = relative(root, real);
  if (isOutside(fromRoot) && !isSavedOutput(real, outputs)) {
    throw new UserError(
      `${label} resolves to ${real}, outside the project (${root}). Only files under the project can be sent.`,
    );
  }
  // Git metadata can hold a remote URL with a token in it; workers never see it.
  if (isGitMetadata(relative(resolve(projectDir), candidate)) || isGitMetadata(fromRoot)) {
    throw new UserError(
      `${label} is git metadata (.git), which is never sent to a worker. Name the project's own files.`,
    );
  }
  const kind = specialKind(await stat(real));
  if (kind === 'a directory') {
    throw new UserError(
      `${label} is a directory. Name files, or use a glob such as "${fromRoot || '.'}/**/*.ts".`,
    );
  }
  if (kind) {
    throw new UserError(
      `${label} is ${kind}, not a regular file; delegate sends regular text files only.`,
    );
  }
  return real;
}

async function readText(path: string, display: string): Promise<string> {
  const buffer = await readRegularFile(
    path,
    display,
    'delegate sends regular text files only.',
  ).catch((error: unknown) => {
    if (error instanceof UserError) throw error;
    throw new UserError(`${display} cannot be read: ${(error as Error).message}`);
  });
  if (buffer.subarray(0, BINARY_SNIFF_BYTES).includes(0)) {
    throw new UserError(
      `${display} looks binary (it contains NUL bytes); delegate sends text files only.`,
    );
  }
  return buffer.toString('utf8');
}
