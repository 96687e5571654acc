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
