import { isUtf8 } from 'node:buffer';
import { stat } from 'node:fs/promises';
import { notRegularFileError, readRegularFile, specialKind } from '../../util/regular-file.ts';
import { UserError } from '../../util/user-error.ts';
import type { ConfinedPath } from './confine-path.ts';

const BINARY_SNIFF_BYTES = 8 * 1024;
/** Past this the file is read with run_bash (head, sed -n, grep) instead of into memory. */
export const MAX_TEXT_FILE_BYTES = 32 * 1024 * 1024;
/** The next step for a FIFO, socket or device, which would block or never end. */
export const ONLY_REGULAR =
  'file tools read regular files only; look at it with run_bash if you must.';

/** A NUL byte in the first 8 KB, the way git and grep tell binary files. */
export function isBinary(buffer: Buffer): boolean {
  return buffer.subarray(0, BINARY_SNIFF_BYTES).includes(0);
}

export interface TextFile {
  text: string;
  /** False when decoding replaced invalid bytes, so writing `text` back would change them. */
  isExactUtf8: boolean;
}

/** Reads an existing regular text file; refuses directories, devices, binaries and huge files. */
export async function readTextFile(file: ConfinedPath): Promise<TextFile> {
  if (!file.exists) throw new UserError(`${file.display} does not exist.`);
  const info = await stat(file.real);
  if (info.isDirectory()) {
    throw new UserError(`${file.display} is a directory; use list_files to see what it holds.`);
  }
  const kind = specialKind(info);
  if (kind) throw notRegularFileError(file.display, kind, ONLY_REGULAR);
  if (info.size > MAX_TEXT_FILE_BYTES) {
    throw new UserError(
      `${file.display} is ${Math.round(info.size / 1024 / 1024)} MB, too big for this tool; ` +
        'look into it with run_bash (head, tail, sed -n, grep).',
    );
  }
  // Checked again on the descriptor read: a path swapped for a FIFO since is refused, not waited on.
  const buffer = await readRegularFile(file.real, file.display, ONLY_REGULAR);
  if (isBinary(buffer)) {
    throw new UserError(
      `${file.display} looks binary (it contains NUL bytes); only text files are shown.`,
    );
  }
  return { text: buffer.toString('utf8'), isExactUtf8: isUtf8(buffer) };
}

/** Lines as an editor counts them: a final newline ends the last line, it does not start one. */
export function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}
