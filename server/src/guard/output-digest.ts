import { formatBytes } from '../util/format-bytes.ts';
import { delegateCall } from './deny-reason.ts';
import { plural } from '../util/plural.ts';

/** What the supervisor gets instead of a big tool output: at most this many bytes (UTF-8). */
export const DIGEST_LIMIT_BYTES = 4 * 1024;
/** Any one line shown in a digest is cut here, so one minified line cannot take the budget. */
const MAX_LINE_CHARS = 240;
const HEAD_SHARE = 0.15;
const TAIL_SHARE = 0.25;
const HEAD_LINES = 10;
const TAIL_LINES = 15;

/**
 * Words and shapes of lines worth keeping from the middle of a big output: errors, failures,
 * warnings, and the frames of stack traces in the common languages. Written for a scan of the
 * whole text at once (`m` flag; `[ \t]`, never `\s`, so no match runs into the next line).
 */
const NOTABLE_WORDS =
  /\b(?:errors?|err!|fail(?:s|ed|ure|ures|ing)?|fatal|panic(?:ked)?|exception|traceback|warn(?:ing|ings)?|denied|refused|cannot|unable|abort(?:ed)?|assert(?:ion)?(?:error)?|segmentation fault|timed out|timeout|not found|undefined reference|deprecated)\b/gim;
const NOTABLE_SHAPES = [
  /\w(?:Error|Exception)\b/gm, // exception class names (ZeroDivisionError, IOException): a literal search
  /^[ \t]+at[ \t]+\S/gm, // JavaScript, Java, C#
  /\bat[ \t]+(?:[^\s(]+[ \t]+)?\(?[^\s()]+:\d+(?::\d+)?\)?/gm, // a JavaScript frame behind a prefix (diff, grep -n)
  /^[ \t]*File "[^"\n]+", line \d+/gm, // Python
  /^[ \t]*#\d+[ \t]+0x[0-9a-f]+/gim, // C and C++ backtraces
  /^[ \t]*-->[ \t]+\S+:\d+:\d+/gm, // rustc
  /^[ \t]+\S+\.go:\d+/gm, // Go
  /^[^\s:]+:\d+:(?:\d+:)?[ \t]/gm, // compiler diagnostics: file:line[:column]: message
];
const NOTABLE = [NOTABLE_WORDS, ...NOTABLE_SHAPES];

export function isNotableLine(line: string): boolean {
  return notableLineIndexes(line, [0]).size > 0;
}

/**
 * The indexes of the lines (starting at `lineStarts`) that hold a notable match: one native
 * scan of the text per pattern, not a test of every line (a cold hook process pays for each).
 */
function notableLineIndexes(text: string, lineStarts: readonly number[]): Set<number> {
  const found = new Set<number>();
  for (const pattern of NOTABLE) {
    pattern.lastIndex = 0;
    for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
      const line = lineOf(lineStarts, match.index);
      found.add(line);
      // One match per line is enough: go on from the next line.
      pattern.lastIndex = lineStarts[line + 1] ?? text.length;
      if (match[0] === '' && pattern.lastIndex === match.index) pattern.lastIndex += 1;
    }
  }
  return found;
}

/** The line holding `offset`: a binary search of the line starts. */
function lineOf(lineStarts: readonly number[], offset: number): number {
  let low = 0;
  let high = lineStarts.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if ((lineStarts[middle] ?? 0) <= offset) low = middle;
    else high = middle - 1;
  }
  return low;
}

export interface DigestInput {
  /** What produced the output, e.g. "Bash `npm test`" or "Read of /repo/app.log". */
  what: string;
  /** The full output as the tool returned it. */
  text: string;
  /** Where the full output was saved (the worker reads it from there)… */
  savedPath?: string;
  /** …or why it was not saved (then the digest is all there is). */
  notSavedWhy?: string;
  thresholdBytes: number;
  limitBytes?: number;
  /** A file whose reading was stopped (`savedPath` is the file itself), not an output that ran. */
  isUnread?: boolean;
  /** The number of the output's first line (a Read from line 500 starts at 500). */
  firstLine?: number;
}

interface Shown {
  index: number;
  line: string;
  count: number;
}

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

/** A long line keeps its start and its end (where a minified bundle or a log line ends in the error). */
function cut(line: string): string {
  const clean = line.replace(/\r$/, '');
  if (clean.length <= MAX_LINE_CHARS) return clean;
  const start = Math.round(MAX_LINE_CHARS * 0.7);
  const end = MAX_LINE_CHARS - start;
  return `${clean.slice(0, start)} …[${clean.length - MAX_LINE_CHARS} chars]… ${clean.slice(-end)}`;
}

const render = ({ index, line, count }: Shown) =>
  `${index + 1}: ${line}${count > 1 ? `  (×${count})` : ''}`;

/** Line numbers as the output's own: shifted when it does not start at line 1. */
const numberedFrom = (firstLine: number) => (entry: Shown) =>
  render({ ...entry, index: entry.index + firstLine - 1 });

/**
 * Consecutive runs of one line, in order, from `indexes`, each cut to a readable length.
 * Taken while the rendered lines fit `budget` bytes and there are fewer than `maxLines`.
 */
function takeRuns(lines: string[], indexes: number[], budget: number, maxLines: number): Shown[] {
  const shown: Shown[] = [];
  let used = 0;
  for (const index of indexes) {
    const line = cut(lines[index] ?? '');
    const last = shown.at(-1);
    if (last && last.line === line && last.index + last.count === index) {
      last.count += 1;
      continue;
    }
    const entry = { index, line, count: 1 };
    const size = bytes(render(entry)) + 1;
    if (shown.length >= maxLines || used + size > budget) break;
    shown.push(entry);
    used += size;
  }
  return shown;
}

/** Notable lines of `from`…`to`, identical ones merged with a count, in order of first sight. */
function notableLines(
  lines: string[],
  notable: ReadonlySet<number>,
  from: number,
  to: number,
): Shown[] {
  const byText = new Map<string, Shown>();
  for (const index of [...notable].filter((i) => i >= from && i < to).sort((a, b) => a - b)) {
    const raw = lines[index] ?? '';
    if (raw.trim() === '') continue;
    const line = cut(raw);
    const seen = byText.get(line);
    if (seen) seen.count += 1;
    else byText.set(line, { index, line, count: 1 });
  }
  return [...byText.values()];
}

function fitting(entries: Shown[], budget: number): Shown[] {
  const kept: Shown[] = [];
  let used = 0;
  for (const entry of entries) {
    const size = bytes(render(entry)) + 1;
    if (used + size > budget) break;
    kept.push(entry);
    used += size;
  }
  return kept;
}

const range = (from: number, to: number) =>
  Array.from({ length: Math.max(0, to - from) }, (_, offset) => from + offset);

/**
 * A deterministic digest of a big output within `limitBytes`: what ran and how big it was,
 * where the whole is saved, the first and last lines, every line from the middle that looks
 * like an error, failure, warning or stack frame (identical ones merged with a count, as many
 * as fit, with the number left out), and the delegate call that analyses all of it.
 */
export function digestOutput(input: DigestInput): string {
  const limit = input.limitBytes ?? DIGEST_LIMIT_BYTES;
  const lines = input.text.replace(/\n$/, '').split('\n');
  const size = `${formatBytes(bytes(input.text))} (${plural(lines.length, 'line')})`;
  const keeps =
    'this digest keeps its first and last lines and its error-like lines, with line numbers.';
  const where =
    input.savedPath === undefined
      ? `The full output was not saved: ${input.notSavedWhy ?? 'no place to save it'}`
      : `The full output is saved in ${input.savedPath}`;
  const header = input.isUnread
    ? `What ${cut(input.what)} would have shown: ${size}; ${keeps}`
    : `${cut(input.what)} returned ${size}, over the ${formatBytes(input.thresholdBytes)} output limit of the delegate plugin. ` +
      `${where}; ${keeps}`;
  const footer =
    input.savedPath === undefined
      ? 'To see more of it, run it again narrowed (a filter, a slice) or once it can be saved.'
      : `To analyse all of it, ${delegateCall(input.savedPath)}; or Read a slice of it with offset/limit.`;
  const sectionTitles = 3 * 60 + 40;
  const room = Math.max(0, limit - bytes(header) - bytes(footer) - sectionTitles);

  const head = takeRuns(
    lines,
    range(0, Math.min(lines.length, 10_000)),
    room * HEAD_SHARE,
    HEAD_LINES,
  );
  const headEnd = head.length === 0 ? 0 : head.at(-1)!.index + head.at(-1)!.count;
  const tailFrom = tailStart(lines, headEnd, room * TAIL_SHARE);
  const tail = takeRuns(lines, range(tailFrom, lines.length), room * TAIL_SHARE, TAIL_LINES);
  const used = [...head, ...tail].reduce((sum, entry) => sum + bytes(render(entry)) + 1, 0);
  const text = input.text.replace(/\n$/, '');
  const lineStarts = [0];
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1))
    lineStarts.push(at + 1);
  const middle = notableLines(lines, notableLineIndexes(text, lineStarts), headEnd, tailFrom);
  const notable = fitting(middle, room - used);

  const show = numberedFrom(input.firstLine ?? 1);
  const parts = [header, `--- first lines ---`, ...head.map(show)];
  if (middle.length > 0) {
    const more = middle.length - notable.length;
    const total = middle.reduce((sum, entry) => sum + entry.count, 0);
    parts.push(
      `--- ${total} error-like lines in between${more > 0 ? ` (${notable.length} distinct shown, ${more} more distinct left out)` : ''} ---`,
      ...notable.map(show),
    );
  } else if (tailFrom > headEnd) {
    parts.push(
      `--- no error-like lines in the ${plural(tailFrom - headEnd, 'line')} in between ---`,
    );
  }
  if (tail.length > 0) parts.push(`--- last lines ---`, ...tail.map(show));
  return `${trimTo(parts.join('\n'), limit - bytes(footer) - 1)}\n${footer}`;
}

/** The first line of the tail: as many last lines as fit `budget`, never before `headEnd`. */
function tailStart(lines: string[], headEnd: number, budget: number): number {
  let used = 0;
  let start = lines.length;
  while (start > headEnd && lines.length - start < TAIL_LINES) {
    const size =
      bytes(render({ index: start - 1, line: cut(lines[start - 1] ?? ''), count: 1 })) + 1;
    if (used + size > budget) break;
    used += size;
    start -= 1;
  }
  return start;
}

/** A last guard on the byte limit (titles were estimated), cut at a character boundary. */
function trimTo(text: string, limit: number): string {
  if (bytes(text) <= limit) return text;
  const marker = '\n… (digest cut to its size limit)';
  return Buffer.from(text, 'utf8')
    .subarray(0, limit - bytes(marker))
    .toString('utf8')
    .replace(/\uFFFD+$/, '')
    .concat(marker);
}
