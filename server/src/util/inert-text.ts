/**
 * Text someone else wrote — a worker's summary, notes and questions, the names of the files it
 * made, test output, a reviewer's notes, a model name an endpoint sent — made inert before the
 * supervisor, a terminal or the status line reads it, so it can never pass for a line of ours:
 *
 * - it never starts a line of its own: one-line text has its line breaks escaped, and a block
 *   of text has every line indented under a heading we write (our own lines never start with a
 *   space), so a worker's "verdict: passed" reads `  verdict: passed`;
 * - it holds no character that ends a line, moves a terminal's cursor, starts an escape
 *   sequence or reorders what a reader sees: C0 and C1 controls (a tab excepted), DEL, the
 *   Unicode line and paragraph separators and the bidirectional controls are escaped
 *   (`\r`, `\x1b`, `\u2028`);
 * - file names are quoted as git quotes them by default (core.quotePath=true).
 */

/** What may end a line, drive a terminal or reorder text; tab and newline are handled by each caller. */
const UNSAFE_CHARACTERS =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const UNSAFE_OR_LINE_SPACE = new RegExp(`[\t\n]|${UNSAFE_CHARACTERS.source}`, 'g');

const NAMED_ESCAPES: Readonly<Record<string, string>> = {
  '\n': '\\n',
  '\t': '\\t',
  '\r': '\\r',
  '\b': '\\b',
  '\f': '\\f',
  '\v': '\\v',
};

function escapeCharacter(character: string): string {
  const named = NAMED_ESCAPES[character];
  if (named) return named;
  const code = character.charCodeAt(0);
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, '0')}`
    : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * Another's text on one line: line breaks, tabs (the status file's separator) and every unsafe
 * character escaped; cut at `maxChars` with an ellipsis.
 */
export function inertLine(text: string, maxChars = Number.POSITIVE_INFINITY): string {
  const flat = String(text).replace(UNSAFE_OR_LINE_SPACE, escapeCharacter);
  return flat.length <= maxChars ? flat : `${flat.slice(0, Math.max(0, maxChars - 1))}…`;
}

/** Another's text in double quotes on one line, as JSON.stringify writes a string, fully escaped. */
export function quotedLine(text: string, maxChars?: number): string {
  return `"${inertLine(String(text).replace(/["\\]/g, '\\$&'), maxChars)}"`;
}

/**
 * Another's text as a block under a heading of ours: unsafe characters escaped, trailing space
 * dropped, every line indented by two spaces, and past `maxChars` cut with a line saying how
 * much was left out.
 */
export function inertBlock(text: string, maxChars = Number.POSITIVE_INFINITY): string {
  const whole = String(text).trimEnd();
  const kept = whole.length <= maxChars ? whole : whole.slice(0, maxChars);
  const cut = whole.length - kept.length;
  const lines = kept.replace(UNSAFE_CHARACTERS, escapeCharacter).split('\n');
  if (cut > 0) lines.push(`… (${cut} more characters left out)`);
  return lines.map((line) => `  ${line}`).join('\n');
}

/** The escapes git's C-style quoting gives its own letter; every other byte to quote is octal. */
const C_ESCAPES: Readonly<Record<number, string>> = {
  0x07: 'a',
  0x08: 'b',
  0x09: 't',
  0x0a: 'n',
  0x0b: 'v',
  0x0c: 'f',
  0x0d: 'r',
  0x22: '"',
  0x5c: '\\',
};

const mustQuote = (byte: number) => byte < 0x20 || byte === 0x22 || byte === 0x5c || byte >= 0x7f;

/**
 * A file name as git prints it with core.quotePath=true (its default): as it is when every byte
 * is printable ASCII other than `"` and `\`, else in double quotes with C escapes (`\n`, `\t`,
 * `\"`, `\\`) and every other such byte of its UTF-8 in octal (`caf\303\251`).
 */
export function quotePath(path: string): string {
  const bytes = Buffer.from(String(path), 'utf8');
  if (!bytes.some(mustQuote)) return String(path);
  let quoted = '"';
  for (const byte of bytes) {
    if (!mustQuote(byte)) quoted += String.fromCharCode(byte);
    else quoted += `\\${C_ESCAPES[byte] ?? byte.toString(8).padStart(3, '0')}`;
  }
  return `${quoted}"`;
}
