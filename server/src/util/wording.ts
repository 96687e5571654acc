/**
 * How a message names the next step: an MCP tool for the model, a `delegate` command for a
 * terminal user. Shared engines take one of these instead of naming either themselves.
 */
export interface Wording {
  answer(id: string): string;
  result(id: string): string;
  cancel(id: string): string;
  cleanup(id: string): string;
  listTasks: string;
  setProfile: string;
}

/** For the model, through the MCP tools. */
export const TOOL_WORDING: Wording = {
  answer: () => 'task_answer',
  result: (id) => `task_result ${id}`,
  cancel: () => 'task_cancel',
  cleanup: (id) => `task_cleanup ${id}`,
  listTasks: 'task_status',
  setProfile: 'provider_set',
};

/** For a terminal user, through the `delegate` CLI. */
export const CLI_WORDING: Wording = {
  answer: (id) => `task_answer ${id} (in Claude Code)`,
  result: (id) => `delegate result ${id}`,
  cancel: (id) => `delegate cancel ${id}`,
  cleanup: (id) => `delegate cleanup ${id}`,
  listTasks: 'delegate tasks',
  setProfile:
    'a profile in config.json in DELEGATE_HOME (~/.delegate), or provider_set in Claude Code',
};
