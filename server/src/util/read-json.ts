import { readFileSync, statSync } from 'node:fs';
import { jsonErrorOffset, positionAt } from './json-position.ts';

/**
 * The one reader of the JSON files delegate or the user writes (config files, credentials, job
 * files, settings): a UTF-8 byte-order mark is accepted (editors on Windows add one), and a file
 * that cannot be used is described in words that fit after its path ("is empty", "is not valid JSON (…)").
 */

const BYTE_ORDER_MARK = '\uFEFF';

/** JSON.parse after dropping a leading byte-order mark. */
export function parseJson(text: string): unknown {
  return JSON.parse(text.startsWith(BYTE_ORDER_MARK) ? text.slice(1) : text);
}

export type JsonFileRead =
  | { value: unknown; text: string }
  /** `text` is what could be read (for salvaging fields of a cut-off file); absent when unreadable. */
  | { problem: string; text?: string };

/**
 * A JSON file's value, or what is wrong with it; undefined when there is no file. With
 * `isSecret`, the parser's message (which quotes the text) is left out.
 */
export function readJsonFile(
  path: string,
  options: { isSecret?: boolean } = {},
): JsonFileRead | undefined {
  let text: string;
  try {
    // Only a regular file is read: a FIFO would block, a directory cannot be.
    // No exception for a file that is not there (the usual case of an optional file: cheaper).
    const stats = statSync(path, { throwIfNoEntry: false });
    if (!stats) return undefined;
    if (!stats.isFile()) return { problem: notAFile(path) };
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    return { problem: unreadable(code, error) };
  }
  const body = text.startsWith(BYTE_ORDER_MARK) ? text.slice(1) : text;
  if (body.trim() === '') return { problem: 'is empty', text };
  try {
    return { value: JSON.parse(body), text };
  } catch (error) {
    return { problem: parseProblem(body, error as Error, options.isSecret ?? false), text };
  }
}

function notAFile(path: string): string {
  try {
    return statSync(path).isDirectory()
      ? 'is a directory, not a file'
      : 'is not a regular file (a FIFO, socket or device)';
  } catch {
    return 'is not a regular file';
  }
}

function unreadable(code: string | undefined, error: unknown): string {
  if (code === 'EACCES' || code === 'EPERM') return 'cannot be read (permission denied)';
  if (code === 'EISDIR') return 'is a directory, not a file';
  return `cannot be read (${code ?? (error as Error).message})`;
}

/** Cut off when the parser ran out of text (a torn write, a full disk); else not JSON at all. */
function parseProblem(body: string, error: Error, isSecret: boolean): string {
  const offset = jsonErrorOffset(body);
  const isCutOff =
    /end of JSON input|Unterminated string/.test(error.message) ||
    (offset !== undefined && offset >= body.trimEnd().length);
  if (isCutOff)
    return 'is not valid JSON (cut off: the text ends early, as after an interrupted write)';
  return isSecret ? 'is not valid JSON' : `is not valid JSON (${jsonErrorReason(error)})`;
}

/**
 * JSON.parse's message without the character offset (`file:line:column` says where) and without
 * the stretch of text it may quote: `Expected ',' or '}' after property value`.
 */
export function jsonErrorReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message
    .replace(/,\s*(".*"|\.\.\..*) is not valid JSON$/s, '')
    .replace(/ (in|after) JSON at position \d+.*$/s, (_, word: string) =>
      word === 'after' ? ' after the JSON value' : '',
    );
}

/**
 * `file:line:column` of the first JSON syntax error in a file's text, as compilers and editors
 * name a place; just `file` when the text parses or the place is not found.
 */
export function atJsonError(file: string, text: string): string {
  const body = text.startsWith(BYTE_ORDER_MARK) ? text.slice(1) : text;
  const offset = jsonErrorOffset(body);
  if (offset === undefined) return file;
  const { line, column } = positionAt(body, offset);
  return `${file}:${line}:${column}`;
}

/** Where a file's problem from readJsonFile is: `file:line:column` for a syntax error, else `file`. */
export function problemPlace(file: string, read: { problem: string; text?: string }): string {
  return read.text !== undefined && read.problem.startsWith('is not valid JSON')
    ? atJsonError(file, read.text)
    : file;
}

/**
 * The records of a JSON-lines text that pass `isRecord`, in order: a torn or foreign line is
 * skipped, the rest of the file is still good.
 */
export function parseJsonLines<T>(text: string, isRecord: (value: unknown) => value is T): T[] {
  const records: T[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const value: unknown = JSON.parse(line);
      if (isRecord(value)) records.push(value);
    } catch {
      // A torn or foreign line.
    }
  }
  return records;
}
