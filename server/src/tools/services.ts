/**
 * Everything the tool handlers run. The server loads it once, at the first tool call, and hands
 * it to each handler (`ToolRun.services`), so it answers `initialize` and `tools/list` without
 * loading the engines (task engine, agent lookup, provider clients, profile editing, globbing).
 * Tools import it for its type only; never import it statically from the server's start-up path.
 */
export { agentRootsFor, listAgents } from '../agent/agents.ts';
export { loadConfig } from '../profiles/load-config.ts';
export { removeProfile, setProfile } from '../profiles/manage-profiles.ts';
export { profileArguments, profilePatch } from '../profiles/profile-input.ts';
export { keyPromptText, keyTarget, noFormText, storeEnteredKey } from '../profiles/enter-key.ts';
export { copilotKeyStep } from '../profiles/copilot/copilot-key.ts';
export { runDelegation } from '../delegation/run-delegation.ts';
export { runExplore } from '../delegation/run-explore.ts';
export { usageReport } from '../calls/usage-report.ts';
export { describeProviders } from '../calls/describe-providers.ts';
export { confineWorkdir } from '../tasks/confine-workdir.ts';
export { ensureResult, finishTask } from '../tasks/finish-task.ts';
export {
  appendEvent,
  isTerminal,
  jobDir,
  listJobs,
  readEvents,
  readJob,
  updateJob,
} from '../store/job-store.ts';
export { postMessage } from '../store/mailbox.ts';
export { killTask, reconcileJob } from '../tasks/reconcile.ts';
export { startTask } from '../tasks/start-task.ts';
export { cancelTask, cleanupTasks, reviewTask } from '../tasks/task-actions.ts';
export { attemptStatusLines, messageTargets } from '../tasks/attempts.ts';
export { resultText, sandboxLine, statusLine } from '../tasks/task-format.ts';
export { getTask, projectTasks, taskStatusText } from '../tasks/task-queries.ts';
