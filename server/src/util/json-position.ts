/**
 * Where a JSON text stops being JSON, as a line and a column, for `file:line:column:` messages.
 * JSON.parse's own message gives a character offset at best, and for some mistakes (an
 * unexpected letter) none at all, so the text is scanned here, once, only after it failed.
 */

export interface TextPosition {
  /** 1-based. */
  line: number;
  /** 1-based, in UTF-16 code units (as editors count columns of BMP text). */
  column: number;
}

/** Thrown out of the scan at the first refused character. */
class Stop extends Error {
  constructor(readonly offset: number) {
    super(`JSON syntax error at offset ${offset}`);
  }
}

const NUMBER = /-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
const HEX_DIGIT = /[0-9a-fA-F]/;

/** The offset of the first character JSON.parse refuses (the length when the text ends early); undefined when it parses. */
export function jsonErrorOffset(text: string): number | undefined {
  let at = 0;
  const stop = (): never => {
    throw new Stop(Math.min(at, text.length));
  };
  const space = () => {
    while (at < text.length && ' \t\n\r'.includes(text[at]!)) at += 1;
  };
  const take = (char: string) => {
    if (text[at] !== char) stop();
    at += 1;
  };
  const string = () => {
    take('"');
    for (;;) {
      const char = text[at];
      if (char === undefined || char < ' ') stop();
      at += 1;
      if (char === '"') return;
      if (char !== '\\') continue;
      if (text[at] === 'u') {
        at += 1;
        for (let digit = 0; digit < 4; digit += 1) {
          if (!HEX_DIGIT.test(text[at] ?? '')) stop();
          at += 1;
        }
      } else if ('"\\/bfnrt'.includes(text[at] ?? 'x')) at += 1;
      else stop();
    }
  };
  const list = (close: string, entry: () => void) => {
    at += 1;
    space();
    if (text[at] === close) return void (at += 1);
    for (;;) {
      entry();
      space();
      if (text[at] !== ',') return take(close);
      at += 1;
    }
  };
  const value = (): void => {
    space();
    const char = text[at];
    if (char === '{') {
      return list('}', () => {
        space();
        string();
        space();
        take(':');
        value();
      });
    }
    if (char === '[') return list(']', value);
    if (char === '"') return string();
    for (const word of ['true', 'false', 'null']) {
      if (char === word[0]) return void [...word].forEach(take);
    }
    NUMBER.lastIndex = at;
    if (!NUMBER.exec(text)) stop();
    at = NUMBER.lastIndex;
  };
  try {
    value();
    space();
    if (at < text.length) stop();
    return undefined;
  } catch (error) {
    if (error instanceof Stop) return error.offset;
    // Nesting too deep to scan: no position rather than none of the message.
    if (error instanceof RangeError) return undefined;
    throw error;
  }
}

/** Line and column (1-based) of a character offset. */
export function positionAt(text: string, offset: number): TextPosition {
  const before = text.slice(0, offset);
  const lineStart = before.lastIndexOf('\n') + 1;
  return { line: before.split('\n').length, column: offset - lineStart + 1 };
}
