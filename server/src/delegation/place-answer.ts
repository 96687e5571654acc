import { randomUUID } from 'node:crypto';
import { realpath, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { isGitMetadata, isOutside } from '../agent/worker-tools/confine-path.ts';
import { writeFileAtomic } from '../util/atomic-write.ts';
import { specialKind } from '../util/regular-file.ts';
import { errorMessage, UserError } from '../util/user-error.ts';
import { formatBytes } from '../util/format-bytes.ts';

/** Answers longer than this are written to a file instead of filling the supervisor's context. */
export const INLINE_ANSWER_LIMIT = 6_000;
const PREVIEW_CHARS = 600;

/**
 * Returns what the supervisor sees of an answer: the answer itself when short, else a
 * preview and the path of a file holding all of it (`target` from `resolveWriteTarget`,
 * or the data home).
 */
export async function placeAnswer(
  answer: string,
  options: { target?: string; resultsDir: string; now: Date; inlineLimit?: number },
): Promise<string> {
  if (options.target !== undefined) {
    const target = options.target;
    const failure = await writeFileAtomic(target, answer).then(
      () => undefined,
      (error: unknown) => errorMessage(error),
    );
    if (failure === undefined) {
      return (
        `Wrote the answer to ${target} (${formatBytes(Buffer.byteLength(answer))}, ${lineCount(answer)} lines).\n` +
        `Preview:\n${preview(answer)}`
      );
    }
    // The call is paid for: keep the answer where it can be written.
    const file = await saveResult(answer, options);
    return `Could not write the answer to ${target} (${failure}); it was saved to ${file} instead.\nPreview:\n${preview(answer)}`;
  }
  if (answer.length <= (options.inlineLimit ?? INLINE_ANSWER_LIMIT)) return answer;
  const file = await saveResult(answer, options);
  return (
    `${preview(answer)}\n\n[The answer is ${formatBytes(Buffer.byteLength(answer))}; the whole of it is in ${file}. ` +
    'Read it with offset/limit, or pass write_to to choose where answers go.]'
  );
}

async function saveResult(
  answer: string,
  options: { resultsDir: string; now: Date },
): Promise<string> {
  const stamp = options.now.toISOString().replace(/[:.]/g, '-');
  const file = join(options.resultsDir, `${stamp}-${randomUUID().slice(0, 8)}.md`);
  await writeFileAtomic(file, answer);
  return file;
}

/**
 * Resolves `write_to` under the project before any model call, so a bad path costs nothing:
 * it must stay inside the project (links followed), keep out of git metadata, and name a
 * regular file or a file still to be created under folders (existing or not).
 */
export async function resolveWriteTarget(writeTo: string, projectDir: string): Promise<string> {
  const label = `write_to ${JSON.stringify(writeTo)}`;
  if (writeTo.includes('\0')) {
    throw new UserError(`${label} contains a NUL byte; name a file under the project.`);
  }
  const root = await realpath(projectDir);
  const target = resolve(root, writeTo);
  const parent = await nearestExisting(dirname(target), label);
  const real = join(parent.real, parent.rest, basename(target));
  const fromRoot = relative(root, real);
  if (isOutside(fromRoot) || fromRoot === '') {
    throw new UserError(
      `${label} is outside the project (${root}). Name a file under the project.`,
    );
  }
  if (isGitMetadata(relative(root, target)) || isGitMetadata(fromRoot)) {
    throw new UserError(
      `${label} is inside git metadata (.git), which delegate never writes. Name a file of the project.`,
    );
  }
  if (!(await isFolder(parent.real))) {
    throw new UserError(
      `${label} goes through ${parent.real}, which is not a directory. Name a file in a folder.`,
    );
  }
  const kind = await existingKind(real);
  if (kind) {
    throw new UserError(
      `${label} is ${kind}, not a regular file. Name a file (new or existing) to hold the answer.`,
    );
  }
  return real;
}

/** Real path of the nearest existing ancestor, plus the part below it that does not exist yet. */
async function nearestExisting(
  directory: string,
  label: string,
): Promise<{ real: string; rest: string }> {
  let current = directory;
  const missing: string[] = [];
  for (;;) {
    try {
      return { real: await realpath(current), rest: missing.reverse().join(sep) };
    } catch {
      const parent = dirname(current);
      if (parent === current) throw new UserError(`${label}: cannot resolve ${directory}.`);
      missing.push(basename(current));
      current = parent;
    }
  }
}

async function isFolder(path: string): Promise<boolean> {
  return (await stat(path)).isDirectory();
}

/** What is at `path` when it is something other than a regular file (a link is followed). */
async function existingKind(path: string): Promise<string | undefined> {
  try {
    return specialKind(await stat(path));
  } catch {
    return undefined;
  }
}

function preview(text: string): string {
  return text.length <= PREVIEW_CHARS ? text : `${text.slice(0, PREVIEW_CHARS)}…`;
}

function lineCount(text: string): number {
  return text === '' ? 0 : text.split('\n').length;
}
