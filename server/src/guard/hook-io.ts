import { closeSync, readFileSync, readSync, statSync } from 'node:fs';
import { openRegularFileSync, readRangeSync } from '../util/regular-file.ts';

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

/**
 * Opens a file the guard measures or reads: never waiting on a FIFO, and refusing anything but
 * a regular file from the descriptor itself, so a path swapped after its size was taken cannot
 * block the hook or feed it `/dev/zero`.
 */
function openRegular(path: string, followLinks = true): { descriptor: number; size: number } {
  return openRegularFileSync(path, path, { followLinks });
}

/** Average bytes per line, from the first `sampleBytes` of a file. */
export function averageLineBytes(path: string, sampleBytes = 32 * 1024): number {
  const { descriptor } = openRegular(path);
  try {
    const sample = readRangeSync(descriptor, 0, sampleBytes);
    const read = sample.length;
    let newlines = 0;
    // indexOf runs natively; a byte loop would run in the interpreter of a cold process.
    for (let at = sample.indexOf(10); at !== -1; at = sample.indexOf(10, at + 1)) newlines += 1;
    return newlines === 0 ? read : read / newlines;
  } finally {
    closeSync(descriptor);
  }
}

/** The most of a file the guards read: past it, its two ends around a line of what was skipped. */
export const MAX_TEXT_READ_BYTES = 64 * 1024 * 1024;

/**
 * A regular file's text whole when it is at most `maxBytes`, else its first and last halves
 * around a line saying how much was skipped; undefined when it cannot be read or is not a
 * regular file (a FIFO, a socket, a device, or with `followLinks: false` a symbolic link).
 */
export function readTextEnds(
  path: string,
  { maxBytes = MAX_TEXT_READ_BYTES, followLinks = true } = {},
): string | undefined {
  try {
    const { descriptor, size } = openRegular(path, followLinks);
    try {
      if (size <= maxBytes) return readRangeSync(descriptor, 0, size).toString('utf8');
      const half = Math.floor(maxBytes / 2);
      const head = readRangeSync(descriptor, 0, half);
      const tail = readRangeSync(descriptor, size - half, half);
      const skipped = size - head.length - tail.length;
      return `${head.toString('utf8')}\n[… ${skipped} bytes skipped …]\n${tail.toString('utf8')}`;
    } finally {
      closeSync(descriptor);
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
  const fd = openRegular(path).descriptor;
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
