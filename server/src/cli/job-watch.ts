import { mkdirSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { jobsDir } from '../config/paths.ts';

export interface JobWatchOptions {
  /** Called (debounced) after a change under the watched folders, and on every poll tick. */
  onChange: (reason: 'change' | 'poll') => void;
  /** The fallback poll: catches what file events miss (other file systems, dead workers). */
  pollMs: number;
  debounceMs?: number;
}

export interface JobWatch {
  /** Watches exactly these task folders from now on (the active tasks a caller cares about). */
  watchTasks(ids: Iterable<string>): void;
  close(): void;
}

/**
 * Change notifications for task files without busy polling: one fs.watch on `jobs/` (tasks
 * appear or go), one on each task folder the caller names (its job.json is replaced on every
 * update), and a slow poll as the safety net. Idle, it costs nothing but the poll tick.
 */
export function watchJobs(dataHome: string, options: JobWatchOptions): JobWatch {
  const root = jobsDir(dataHome);
  mkdirSync(root, { recursive: true });
  const debounceMs = options.debounceMs ?? 100;
  const perTask = new Map<string, FSWatcher>();
  let pending: NodeJS.Timeout | undefined;
  const changed = () => {
    pending ??= setTimeout(() => {
      pending = undefined;
      options.onChange('change');
    }, debounceMs);
  };
  const rootWatcher = watchQuietly(root, () => changed());
  const poll = setInterval(() => options.onChange('poll'), options.pollMs);
  return {
    watchTasks(ids) {
      const wanted = new Set(ids);
      for (const [id, watcher] of perTask) {
        if (wanted.has(id)) continue;
        watcher.close();
        perTask.delete(id);
      }
      for (const id of wanted) {
        if (perTask.has(id)) continue;
        // Only job.json matters: events.jsonl grows on every step and would wake us for nothing.
        const watcher = watchQuietly(join(root, id), (file) => {
          if (file === null || file === 'job.json') changed();
        });
        if (watcher) perTask.set(id, watcher);
      }
    },
    close() {
      clearInterval(poll);
      clearTimeout(pending);
      rootWatcher?.close();
      for (const watcher of perTask.values()) watcher.close();
      perTask.clear();
    },
  };
}

/** fs.watch that never throws: a folder removed meanwhile is simply not watched (the poll covers it). */
function watchQuietly(
  path: string,
  listener: (file: string | null) => void,
): FSWatcher | undefined {
  try {
    const watcher = watch(path, { persistent: true }, (_event, file) => listener(file));
    watcher.on('error', () => watcher.close());
    return watcher;
  } catch {
    return undefined;
  }
}
