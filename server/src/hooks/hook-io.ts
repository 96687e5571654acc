import { closeSync, openSync, readFileSync, readSync, statSync } from 'node:fs';

/** The whole of stdin, read synchronously: the fastest way for a short-lived hook. */
export function readStdin(): string {
  try {
    return readFileSync(0, 'utf8');
  } catch {
    return '';
  }
}

/** Size of a regular file, else undefined (missing, directory, FIFO, unreadable). */
export function regularFileSize(path: string): number | undefined {
  try {
    const stats = statSync(path, { throwIfNoEntry: false });
    return stats?.isFile() ? stats.size : undefined;
  } catch {
    return undefined;
  }
}

/** Average bytes per line, from the first `sampleBytes` of a file. */
export function averageLineBytes(path: string, sampleBytes = 32 * 1024): number {
  const buffer = Buffer.allocUnsafe(sampleBytes);
  const fd = openSync(path, 'r');
  try {
    const read = readSync(fd, buffer, 0, sampleBytes, 0);
    const sample = buffer.subarray(0, read);
    let newlines = 0;
    // indexOf runs natively; a byte loop would run in the interpreter of a cold process.
    for (let at = sample.indexOf(10); at !== -1; at = sample.indexOf(10, at + 1)) newlines += 1;
    return newlines === 0 ? read : read / newlines;
  } finally {
    closeSync(fd);
  }
}

/**
 * A text file whole when it is at most `maxBytes`, else its first and last halves around a
 * line saying how much was skipped; undefined when it cannot be read.
 */
export function readTextEnds(path: string, maxBytes = 64 * 1024 * 1024): string | undefined {
  try {
    const size = statSync(path).size;
    if (size <= maxBytes) return readFileSync(path, 'utf8');
    const half = Math.floor(maxBytes / 2);
    const fd = openSync(path, 'r');
    try {
      const head = Buffer.allocUnsafe(half);
      const tail = Buffer.allocUnsafe(half);
      const headBytes = readSync(fd, head, 0, half, 0);
      const tailBytes = readSync(fd, tail, 0, half, size - half);
      const skipped = size - headBytes - tailBytes;
      return `${head.subarray(0, headBytes).toString('utf8')}\n[… ${skipped} bytes skipped …]\n${tail.subarray(0, tailBytes).toString('utf8')}`;
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
}

/** Lines `firstLine`… (1-based) of a file, `lineCount` of them, each cut at `maxLineBytes`. */
export interface ReadWindow {
  firstLine: number;
  lineCount: number;
  maxLineBytes: number;
}

/**
 * The bytes a Read of `window` returns, counted in the file: it reads until the window ends
 * or the count passes `stopAbove` (then any number above it is as good as the exact one).
 */
export function windowBytes(path: string, window: ReadWindow, stopAbove: number): number {
  const lastLine = window.firstLine + window.lineCount - 1;
  const buffer = Buffer.allocUnsafe(64 * 1024);
  const fd = openSync(path, 'r');
  let line = 1;
  let lineBytes = 0;
  let total = 0;
  const endLine = () => {
    if (line >= window.firstLine) total += Math.min(lineBytes, window.maxLineBytes);
    line += 1;
    lineBytes = 0;
  };
  try {
    for (let position = 0; line <= lastLine && total <= stopAbove;) {
      const read = readSync(fd, buffer, 0, buffer.length, position);
      if (read === 0) {
        if (lineBytes > 0) endLine();
        break;
      }
      position += read;
      let start = 0;
      for (
        let at = buffer.indexOf(10, start);
        at !== -1 && at < read;
        at = buffer.indexOf(10, start)
      ) {
        lineBytes += at - start;
        endLine();
        start = at + 1;
        if (line > lastLine || total > stopAbove) return total;
      }
      lineBytes += read - start;
    }
  } finally {
    closeSync(fd);
  }
  return total;
}
