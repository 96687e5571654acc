import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readFileSync,
  readSync,
  type Stats,
} from 'node:fs';
import { open } from 'node:fs/promises';
import { UserError } from './user-error.ts';

/**
 * Opening never waits: a FIFO opened for reading blocks until a writer comes, and each such
 * read holds one of libuv's four file-system threads, so four of them stall every other call.
 */
const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | (constants.O_NOCTTY ?? 0);

/** What a non-regular file is, in words ("a FIFO (named pipe)"); undefined for a regular file. */
export function specialKind(info: Stats): string | undefined {
  if (info.isFile()) return undefined;
  if (info.isDirectory()) return 'a directory';
  if (info.isFIFO()) return 'a FIFO (named pipe)';
  if (info.isSocket()) return 'a socket';
  if (info.isCharacterDevice()) return 'a character device';
  if (info.isBlockDevice()) return 'a block device';
  return 'not a regular file';
}

/** The error for a path that is not a regular file; `label` names it as the caller gave it. */
export function notRegularFileError(label: string, kind: string, next: string): UserError {
  return new UserError(`${label} is ${kind}, not a regular file: ${next}`);
}

/**
 * Reads a regular file. FIFOs, sockets and devices are refused at once, from the descriptor
 * actually opened (so a path swapped after an earlier check is still refused, never waited on).
 */
export async function readRegularFile(
  path: string,
  label: string,
  next = 'only regular files are read.',
): Promise<Buffer> {
  const handle = await open(path, READ_FLAGS);
  try {
    const kind = specialKind(await handle.stat());
    if (kind) throw notRegularFileError(label, kind, next);
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/** The same, synchronously (agent definitions are read on synchronous paths). */
export function readRegularFileSync(
  path: string,
  label: string,
  next = 'only regular files are read.',
): Buffer {
  const { descriptor } = openRegularFileSync(path, label, { next });
  try {
    return readFileSync(descriptor);
  } finally {
    closeSync(descriptor);
  }
}

/**
 * Creates or overwrites a regular file. Opening never waits (a FIFO with no reader would
 * wait forever) and the descriptor is checked before anything is truncated or written.
 */
export async function writeRegularFile(
  path: string,
  data: string,
  label: string,
  next = 'only regular files are written.',
): Promise<void> {
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_NONBLOCK;
  const handle = await open(path, flags, 0o666).catch((error: unknown) => {
    // ENXIO: a FIFO nobody reads.
    if ((error as NodeJS.ErrnoException).code === 'ENXIO') {
      throw notRegularFileError(label, 'a FIFO (named pipe)', next);
    }
    throw error;
  });
  try {
    const kind = specialKind(await handle.stat());
    if (kind) throw notRegularFileError(label, kind, next);
    await handle.truncate(0);
    await handle.writeFile(data);
  } finally {
    await handle.close();
  }
}

/**
 * Opens a regular file for reading without waiting (see READ_FLAGS) and checks the descriptor
 * itself: a FIFO, socket or device (`/dev/zero`) is refused before a byte is read, and with
 * `followLinks: false` so is a symbolic link at `path`. Returns the descriptor and the size;
 * the caller closes it.
 */
export function openRegularFileSync(
  path: string,
  label: string,
  {
    followLinks = true,
    next = 'only regular files are read.',
  }: { followLinks?: boolean; next?: string } = {},
): { descriptor: number; size: number } {
  const flags = READ_FLAGS | (followLinks ? 0 : constants.O_NOFOLLOW);
  let descriptor: number;
  try {
    descriptor = openSync(path, flags);
  } catch (error) {
    // ELOOP: the link O_NOFOLLOW refused; ENXIO: a socket.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' && !followLinks)
      throw notRegularFileError(label, 'a symbolic link', 'links are not followed here.');
    if (code === 'ENXIO') throw notRegularFileError(label, 'a socket', next);
    throw error;
  }
  const info = fstatSync(descriptor);
  const kind = specialKind(info);
  if (kind) {
    closeSync(descriptor);
    throw notRegularFileError(label, kind, next);
  }
  return { descriptor, size: info.size };
}

/** Up to `length` bytes at `position` of an open file (fewer at its end). */
export function readRangeSync(descriptor: number, position: number, length: number): Buffer {
  const buffer = Buffer.allocUnsafe(Math.max(0, length));
  let filled = 0;
  while (filled < buffer.length) {
    const read = readSync(descriptor, buffer, filled, buffer.length - filled, position + filled);
    if (read === 0) break;
    filled += read;
  }
  return buffer.subarray(0, filled);
}

/**
 * A regular file's first `maxBytes` at most, as text ending at a whole line (and never inside a
 * character) when the file is longer, with the file's whole size.
 */
export function readTextStartSync(
  path: string,
  label: string,
  maxBytes: number,
): { text: string; shownBytes: number; totalBytes: number } {
  const { descriptor, size } = openRegularFileSync(path, label);
  try {
    const bytes = readRangeSync(descriptor, 0, Math.min(size, maxBytes) + 1);
    if (bytes.length <= maxBytes)
      return {
        text: bytes.toString('utf8'),
        shownBytes: bytes.length,
        totalBytes: Math.max(size, bytes.length),
      };
    const cut = bytes.lastIndexOf(10, maxBytes - 1);
    const shown = bytes.subarray(0, cut > 0 ? cut + 1 : maxBytes);
    const text = shown.toString('utf8').replace(/\uFFFD+$/, '');
    return { text, shownBytes: Buffer.byteLength(text), totalBytes: Math.max(size, bytes.length) };
  } finally {
    closeSync(descriptor);
  }
}

/** A whole regular file of at most `maxBytes` (a config file); a bigger one is refused unread. */
export function readSmallRegularFileSync(path: string, label: string, maxBytes: number): Buffer {
  const { descriptor, size } = openRegularFileSync(path, label);
  try {
    const bytes = readRangeSync(descriptor, 0, maxBytes + 1);
    if (bytes.length > maxBytes) {
      throw new UserError(`${label} is over ${maxBytes} bytes (${size}); it is not read.`);
    }
    return bytes;
  } finally {
    closeSync(descriptor);
  }
}
