export type { ResourceLimits } from '../config/resource-limits.ts';
export { decideSandbox, type SandboxDecision } from './decide-sandbox.ts';
export {
  BWRAP_PATH_VARIABLE,
  checkSandbox,
  closeSandbox,
  prepareCommand,
  sandboxInstallHint,
  type PreparedCommand,
  type SandboxCheck,
  withSandboxLease,
} from './os-sandbox.ts';
export { recordSandboxCheck, sandboxRecordPath } from './sandbox-record.ts';
export {
  DEFAULT_LIMITS,
  SECRET_HOME_PATHS,
  taskSandboxPolicy,
  type SandboxPolicy,
  type TaskSandboxInput,
} from './sandbox-policy.ts';
export {
  checkJobSandbox,
  sandboxForJob,
  sandboxPolicyForJob,
  taskAllowHosts,
  type SandboxedJob,
} from './task-sandbox.ts';
