import { closeSync, constants, fstatSync, openSync, readFileSync, type Stats } from 'node:fs';
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
  const descriptor = openSync(path, READ_FLAGS);
  try {
    const kind = specialKind(fstatSync(descriptor));
    if (kind) throw notRegularFileError(label, kind, next);
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
