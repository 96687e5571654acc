import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Writes a file so readers never see it half-written: a temp file beside it, then rename.
 * Plain `writeFile` gave hundreds of torn reads under concurrent readers.
 */
export async function writeFileAtomic(path: string, data: string, mode?: number): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.${Date.now()}.tmp`;
  await writeFile(temp, data, mode === undefined ? undefined : { mode });
  await rename(temp, path);
}
