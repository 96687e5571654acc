/**
 * The MCP annotations every tool declares, as a few named presets: each tool picks the one that
 * says what it does, so the hints are spelled out here only.
 */

/** All four MCP annotations, required on every tool. */
export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** Only reads this machine's own files (task store, ledger, agent definitions). */
export const READS_LOCAL_FILES: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

/** Only reads, but may contact the configured model endpoints. */
export const READS_ENDPOINTS: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: true,
};

/** Reads the project through a worker model (an outside service): changes nothing; each call a new run. */
export const EXPLORES: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: true,
};

/** Sends work to a worker model (an outside service); each call is a new run. */
export const RUNS_WORKERS: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: true,
};

/** Adds to local state (a message, a stored key); calling twice adds twice. */
export const WRITES_LOCAL_FILES: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: false,
};

/** Sets local state to what the arguments say; calling twice changes nothing more. */
export const SETS_LOCAL_FILES: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

/** Removes local state (processes, worktrees, profiles); calling twice changes nothing more. */
export const REMOVES_LOCAL_FILES: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: true,
  openWorldHint: false,
};
