import { randomUUID } from 'node:crypto';
import { realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { writeFileAtomic } from '../util/atomic-write.ts';
import { UserError } from '../util/user-error.ts';
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
    await writeFileAtomic(target, answer);
    return (
      `Wrote the answer to ${target} (${formatBytes(Buffer.byteLength(answer))}, ${lineCount(answer)} lines).\n` +
      `Preview:\n${preview(answer)}`
    );
  }
  if (answer.length <= (options.inlineLimit ?? INLINE_ANSWER_LIMIT)) return answer;
  const stamp = options.now.toISOString().replace(/[:.]/g, '-');
  const file = join(options.resultsDir, `${stamp}-${randomUUID().slice(0, 8)}.md`);
  await writeFileAtomic(file, answer);
  return (
    `${preview(answer)}\n\n[The answer is ${formatBytes(Buffer.byteLength(answer))}; the whole of it is in ${file}. ` +
    'Read it with offset/limit, or pass write_to to choose where answers go.]'
  );
}

/** Resolves `write_to` under the project before any model call, so a bad path costs nothing. */
export async function resolveWriteTarget(writeTo: string, projectDir: string): Promise<string> {
  const root = await realpath(projectDir);
  const target = resolve(root, writeTo);
  const parent = await nearestExisting(dirname(target));
  const fromRoot = relative(root, join(parent.real, parent.rest));
  if (fromRoot === '..' || fromRoot.startsWith(`..${sep}`) || isAbsolute(fromRoot)) {
    throw new UserError(
      `write_to "${writeTo}" is outside the project (${root}). Name a file under the project.`,
    );
  }
  return join(parent.real, parent.rest, basename(target));
}

/** Real path of the nearest existing ancestor, plus the part below it that does not exist yet. */
async function nearestExisting(directory: string): Promise<{ real: string; rest: string }> {
  let current = directory;
  const missing: string[] = [];
  for (;;) {
    try {
      return { real: await realpath(current), rest: missing.reverse().join(sep) };
    } catch {
      const parent = dirname(current);
      if (parent === current) throw new UserError(`Cannot resolve ${directory}.`);
      missing.push(current.slice(parent.length + (parent.endsWith(sep) ? 0 : 1)));
      current = parent;
    }
  }
}

function preview(text: string): string {
  return text.length <= PREVIEW_CHARS ? text : `${text.slice(0, PREVIEW_CHARS)}…`;
}

function lineCount(text: string): number {
  return text === '' ? 0 : text.split('\n').length;
}
