import type { Environment } from '../config/paths.ts';
import type { Discover } from './resolve-profile.ts';
import type { LearnedFacts } from '../wire/spec.ts';

/** What every floor gets from its entry (server, worker, CLI); nothing is read from globals. */
export interface AppContext {
  env: Environment;
  projectDir: string;
  dataHome: string;
  now(): Date;
  discover?: Discover;
  /**
   * The plugin root (holds workers/ and statusline/), worked out once by the entry
   * (`resolvePluginRoot`).
   */
  pluginRoot: string;
  /** The bundled task worker (dist/task-worker.mjs), spawned detached for each task. */
  workerScript?: string;
  /**
   * The long-lived server keeps one task worker loaded for its next start (the standby,
   * tasks/standby-worker.ts); a CLI process, which exits after its start, does not.
   */
  keepsWorkerStandby?: boolean;
  /**
   * What adapters learned about each profile's model (e.g. that it takes
   * `max_completion_tokens`), kept for the life of the process; keyed by profile and model.
   */
  learned?: Map<string, LearnedFacts>;
}
