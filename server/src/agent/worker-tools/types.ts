import type { RemoteTask } from '../../runners/remote-shell.ts';
import type { SandboxPolicy } from '../../sandbox/sandbox-policy.ts';

/** What every worker tool call runs against: the task directory, its environment and its cancellation. */
export interface WorkerToolContext {
  /** Real path of the task directory (a git worktree or the workdir); every path is confined to it. */
  root: string;
  /** Environment for run_bash: already filtered by workerEnv(); no keys. */
  env: Record<string, string>;
  signal?: AbortSignal;
  /** The OS sandbox run_bash commands run in; absent when the task runs unsandboxed. */
  sandbox?: SandboxPolicy;
  /** The runner run_bash commands run on (the files synced there and back), instead of this machine. */
  remote?: RemoteTask;
  /** Called with a run_bash child's process-group id when it starts (running true) and ends (false), so a canceller can kill it. */
  onChildProcess?(pgid: number, running: boolean): void;
}

export interface WorkerToolResult {
  content: string;
  isError?: boolean;
  /** Paths relative to root that the call wrote. */
  filesWritten?: string[];
}

/** A tool the builtin agent offers the worker model. `run` never throws: failures come back as `isError` text. */
export interface WorkerTool {
  name: string;
  description: string;
  /** JSON Schema object for the model. */
  inputSchema: Record<string, unknown>;
  isReadOnly: boolean;
  run(input: unknown, context: WorkerToolContext): Promise<WorkerToolResult>;
}
