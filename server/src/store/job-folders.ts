import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { jobsDir } from '../config/paths.ts';
import { fingerprintOfStats } from '../util/file-fingerprint.ts';

/** One folder under `<dataHome>/jobs/`: its name (the task id when it is a task) and its job file. */
export interface JobFolder {
  id: string;
  dir: string;
  jobFile: string;
  /**
   * The job file's identity (`fingerprintOfStats`) when the listing stat'ed it (a `writtenSinceMs`
   * filter), which every write changes: job files are replaced, never edited.
   */
  stamp?: string;
}

export interface JobFolderFilter {
  /** Only folders whose job.json was written at or after this time (ms); older ones are only stat'ed. */
  writtenSinceMs?: number;
}

/**
 * Every folder under `<dataHome>/jobs/`, sorted by name; none when there is no jobs folder. The
 * one scan of the job folders: the status line, the hooks and the task store all list tasks
 * through it. It reads no job file, so callers decide what an unreadable one means.
 */
export function listJobFolders(dataHome: string, filter: JobFolderFilter = {}): JobFolder[] {
  const root = jobsDir(dataHome);
  let ids: string[];
  try {
    ids = readdirSync(root).sort();
  } catch {
    return [];
  }
  const folders = ids.map((id) => {
    const dir = join(root, id);
    return { id, dir, jobFile: join(dir, 'job.json') };
  });
  const since = filter.writtenSinceMs;
  if (since === undefined) return folders;
  return folders.flatMap((folder) => {
    const stats = statOrUndefined(folder.jobFile);
    return stats && Number(stats.mtimeMs) >= since
      ? [{ ...folder, stamp: fingerprintOfStats(stats) }]
      : [];
  });
}

/** A stray file among the folders (ENOTDIR) or a folder it may not read is no job: skipped. */
function statOrUndefined(path: string) {
  try {
    return statSync(path, { bigint: true });
  } catch {
    return undefined;
  }
}
