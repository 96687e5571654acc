import { randomUUID } from 'node:crypto';
import { lstat, realpath } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { isGitMetadata, isOutside } from '../agent/worker-tools/confine-path.ts';
import { writeFileAtomic } from '../util/atomic-write.ts';
import { specialKind } from '../util/regular-file.ts';
import { errorMessage, UserError } from '../util/user-error.ts';
import { formatBytes } from '../util/format-bytes.ts';
import { plural } from '../util/plural.ts';

/** Answers longer than this are written to a file instead of filling the supervisor's context. */
export const INLINE_ANSWER_LIMIT = 6_000;
const PREVIEW_CHARS = 600;

/** Where `write_to` puts the answer, as `resolveWriteTarget` checked it. */
export interface WriteTarget {
  path: string;
  /** The project's real path, and the target below it: checked again just before the write. */
  root: string;
  fromRoot: string;
  label: string;
}

/**
 * Returns what the supervisor sees of an answer: the answer itself when short, else a
 * preview and the path of a file holding all of it (`target` from `resolveWriteTarget`,
 * or the data home).
 */
export async function placeAnswer(
  answer: string,
  options: { target?: WriteTarget; resultsDir: string; now: Date; inlineLimit?: number },
): Promise<string> {
  if (options.target !== undefined) {
    const { path: target, root, fromRoot, label } = options.target;
    // A link planted while the model answered is refused as at the start.
    const failure = await checkWritePath(root, fromRoot, label)
      .then(() => writeFileAtomic(target, answer))
      .then(
        () => undefined,
        (error: unknown) => errorMessage(error),
      );
    if (failure === undefined) {
      return (
        `Wrote the answer to ${target} (${formatBytes(Buffer.byteLength(answer))}, ${plural(lineCount(answer), 'line')}).\n` +
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
 * it must stay inside the project, keep out of git metadata, and name a regular file or a file
 * still to be created under folders (existing or not). No symbolic link is followed or replaced
 * on the way: not the file itself, not a folder between the project and it (a link planted in
 * the project would send the answer, or the replacing rename, somewhere else).
 */
export async function resolveWriteTarget(
  writeTo: string,
  projectDir: string,
): Promise<WriteTarget> {
  const label = `write_to ${JSON.stringify(writeTo)}`;
  if (writeTo.includes('\0')) {
    throw new UserError(`${label} contains a NUL byte; name a file under the project.`);
  }
  const root = await realpath(projectDir);
  // Named under the project as given, or under its real path.
  const asGiven = relative(resolve(projectDir), resolve(projectDir, writeTo));
  const fromRoot = isOutside(asGiven) ? relative(root, resolve(root, writeTo)) : asGiven;
  if (isOutside(fromRoot) || fromRoot === '') {
    throw new UserError(
      `${label} is outside the project (${root}). Name a file under the project.`,
    );
  }
  if (isGitMetadata(fromRoot)) {
    throw new UserError(
      `${label} is inside git metadata (.git), which delegate never writes. Name a file of the project.`,
    );
  }
  await checkWritePath(root, fromRoot, label);
  return { path: join(root, fromRoot), root, fromRoot, label };
}

/**
 * Refuses a write path that goes through or ends in a symbolic link, goes through something
 * other than a folder, or ends in something other than a regular file. Checked when `write_to`
 * is resolved and again just before the answer is written (the call takes a while).
 */
export async function checkWritePath(root: string, fromRoot: string, label: string): Promise<void> {
  const parts = fromRoot.split(sep);
  let current = root;
  for (const [index, part] of parts.entries()) {
    current = join(current, part);
    const info = await lstat(current).catch(() => undefined);
    // Missing: this folder and those below it are created for the answer.
    if (!info) return;
    const isLast = index === parts.length - 1;
    if (info.isSymbolicLink()) {
      throw new UserError(
        `${label} ${isLast ? 'is' : 'goes through'} a symbolic link (${current}); delegate never writes through or over a link. Name a file in the project's own folders.`,
      );
    }
    if (!isLast && !info.isDirectory()) {
      throw new UserError(
        `${label} goes through ${current}, which is not a directory. Name a file in a folder.`,
      );
    }
    const kind = isLast ? specialKind(info) : undefined;
    if (kind) {
      throw new UserError(
        `${label} is ${kind}, not a regular file. Name a file (new or existing) to hold the answer.`,
      );
    }
  }
}

function preview(text: string): string {
  return text.length <= PREVIEW_CHARS ? text : `${text.slice(0, PREVIEW_CHARS)}…`;
}

function lineCount(text: string): number {
  return text === '' ? 0 : text.split('\n').length;
}
