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
  /** The bundled task worker (dist/task-worker.mjs), spawned detached to run tasks. */
  workerScript?: string;
  /**
   * The long-lived server runs all its tasks on one task host, kept for its next start
   * (tasks/task-host.ts); a CLI process, which exits after its start, gives its task a host of
   * its own.
   */
  keepsTaskHost?: boolean;
  /**
   * What adapters learned about each profile's model (e.g. that it takes
   * `max_completion_tokens`), kept for the life of the process; keyed by profile and model.
   */
  learned?: Map<string, LearnedFacts>;
}
