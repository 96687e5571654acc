import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { readRegularFile } from '../util/regular-file.ts';
import { quotePath } from '../util/inert-text.ts';
import { plural } from '../util/plural.ts';

/** What checking an answer's `path:line` references found. */
export interface ReferenceCheck {
  /** Distinct references looked up. */
  checked: number;
  /** Those that point at nothing, with why (in the answer, each is marked where it stands). */
  broken: Array<{ reference: string; why: string }>;
}

/**
 * `path:line`, `path:line-line` or `path:line:column`, where the path has a folder or an
 * extension (so "12:30" or "note:1" are not taken for one), not inside a URL or a longer word.
 */
const REFERENCE =
  /(?<![\w@./:-])((?:\.{1,2}\/|\/)?[\w@+-][\w@.+/-]*):(\d+)(?:[-–](\d+))?(?::\d+)?/g;
/** Files larger than this are not read to count their lines: the reference is left unjudged. */
const MAX_CHECKED_BYTES = 32 * 1024 * 1024;

/**
 * Checks every `path:line` reference of an answer against the files under `root`: the file
 * must exist there and hold the line (every line of a range). A reference that points at
 * nothing is marked in place — `src/a.ts:999 [unverified: the file has 120 lines]` — so it can
 * never pass for a fact, and listed in the check.
 */
export async function checkReferences(
  answer: string,
  root: string,
): Promise<{ answer: string; check: ReferenceCheck }> {
  const lineCounts = new Map<string, Promise<number | string>>();
  const verdicts = new Map<string, string | undefined>();
  const marked: string[] = [];
  let last = 0;
  for (const match of answer.matchAll(REFERENCE)) {
    const [reference, path = '', first = '0', end] = match;
    if (!looksLikePath(path)) continue;
    if (!verdicts.has(reference)) {
      if (!lineCounts.has(path)) lineCounts.set(path, countLines(path, root));
      verdicts.set(
        reference,
        why(await lineCounts.get(path)!, Number(first), Number(end ?? first)),
      );
    }
    const verdict = verdicts.get(reference);
    if (verdict === undefined) continue;
    const at = (match.index ?? 0) + reference.length;
    marked.push(answer.slice(last, at), ` [unverified: ${verdict}]`);
    last = at;
  }
  marked.push(answer.slice(last));
  const broken = [...verdicts]
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([reference, reason]) => ({ reference, why: reason }));
  return { answer: marked.join(''), check: { checked: verdicts.size, broken } };
}

/** A folder in it, or an extension with a letter (so `v1.2:3` and `16:9` are not paths). */
function looksLikePath(path: string): boolean {
  return path.includes('/') || /\.[\w-]*[a-z][\w-]*$/i.test(path);
}

/** Why a reference to lines first..end of a file with `lines` lines is wrong; undefined when it holds. */
function why(lines: number | string, first: number, end: number): string | undefined {
  if (typeof lines === 'string') return lines;
  if (first < 1 || end < first) return 'not a line number';
  if (end > lines) return `the file has ${plural(lines, 'line')}`;
  return undefined;
}

/** The file's line count, or why it cannot be counted (no such file, outside the project…). */
async function countLines(path: string, root: string): Promise<number | string> {
  const absolute = isAbsolute(path) ? path : resolve(root, path);
  if (!isInside(root, absolute)) return 'outside the project';
  const real = await realpath(absolute).catch(() => undefined);
  if (!real) return 'no such file';
  // A link out of the project is not followed.
  if (!isInside(root, real)) return 'outside the project';
  try {
    if ((await stat(real)).size > MAX_CHECKED_BYTES) return 'too large to check';
    const text = (await readRegularFile(real, 'a referenced file')).toString('utf8');
    return text === '' ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  } catch {
    return 'not a file that can be read';
  }
}

function isInside(root: string, path: string): boolean {
  const inside = relative(root, path);
  return !(inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside));
}

/** One line for the result: how many references were checked, and the ones that point at nothing. */
export function referencesLine(check: ReferenceCheck): string | undefined {
  if (check.checked === 0) return undefined;
  if (check.broken.length === 0) {
    return `references: ${check.checked} checked against the files, all found`;
  }
  const list = check.broken
    .slice(0, 10)
    .map(({ reference, why: reason }) => `${quotePath(reference)} (${reason})`)
    .join(', ');
  const more = check.broken.length > 10 ? `, and ${check.broken.length - 10} more` : '';
  return `references: ${check.checked} checked against the files, ${check.broken.length} point at nothing: ${list}${more}`;
}
