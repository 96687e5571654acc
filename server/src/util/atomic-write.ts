import { randomBytes } from 'node:crypto';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * The temp file beside `path`: a name nobody can predict, created exclusively (`wx`), so a link
 * planted under that name is never followed and two writers never share one.
 */
const tempBeside = (path: string) => `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;

/**
 * Writes a file so readers never see it half-written: a temp file beside it, then rename.
 * Plain `writeFile` gave hundreds of torn reads under concurrent readers.
 */
export async function writeFileAtomic(path: string, data: string, mode?: number): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temp = tempBeside(path);
  try {
    await writeFile(temp, data, { flag: 'wx', ...(mode === undefined ? {} : { mode }) });
    await rename(temp, path);
  } catch (error) {
    // A failed write (a folder in the way, a full disk) leaves no temp file behind.
    await rm(temp, { force: true });
    throw error;
  }
}

/** The same, synchronously: for small files on hot paths (job.json), where thread-pool hops cost more than the write. */
export function writeFileAtomicSync(path: string, data: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const temp = tempBeside(path);
  try {
    writeFileSync(temp, data, { flag: 'wx' });
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}
