/** An MCP tool named as if the CLI had it: not followed by "(in Claude Code)" or "in Claude Code". */
export const BARE_TOOL =
  /\b(provider_key|provider_set|provider_remove|task_result|task_cancel|task_cleanup|task_status|task_start|task_answer|task_progress|delegate_batch|agents_list|api_key_env)\b(?!(?: t_[a-z0-9]+)? \(?in Claude Code)/;
