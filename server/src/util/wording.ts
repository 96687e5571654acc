/**
 * How a message names the next step: an MCP tool for the model, a `delegate` command for a
 * terminal user. Code both share takes one of these instead of naming either itself.
 */
export interface Wording {
  answer(id: string): string;
  result(id: string): string;
  cancel(id: string): string;
  cleanup(id: string): string;
  /** Cleaning up while throwing the task's work away (an in-place task's files put back). */
  discard(id: string, force?: boolean): string;
  listTasks: string;
  setProfile: string;
}

/** For the model, through the MCP tools. */
export const TOOL_WORDING: Wording = {
  answer: () => 'task_answer',
  result: (id) => `task_result ${id}`,
  cancel: () => 'task_cancel',
  cleanup: (id) => `task_cleanup ${id}`,
  discard: (id, force) => `task_cleanup ${id} with discard: true${force ? ', force: true' : ''}`,
  listTasks: 'task_status',
  setProfile: 'provider_set',
};

/** For a terminal user, through the `delegate` CLI. */
export const CLI_WORDING: Wording = {
  answer: (id) => `task_answer ${id} (in Claude Code)`,
  result: (id) => `delegate result ${id}`,
  cancel: (id) => `delegate cancel ${id}`,
  cleanup: (id) => `delegate cleanup ${id}`,
  discard: (id, force) => `delegate cleanup ${id} --discard${force ? ' --force' : ''}`,
  listTasks: 'delegate tasks',
  setProfile:
    'a profile in config.json in DELEGATE_HOME (~/.delegate), or provider_set in Claude Code',
};

/** MCP tools with a `delegate` command doing the same for one task. */
const TASK_COMMANDS: ReadonlyArray<readonly [string, string]> = [
  ['task_result', 'result'],
  ['task_cancel', 'cancel'],
  ['task_cleanup', 'cleanup'],
];
/** Tools with no command of their own: named as Claude Code's, never as if the CLI had them. */
const CLAUDE_CODE_ONLY = [
  'task_start',
  'task_answer',
  'task_progress',
  'delegate_batch',
  'agents_list',
  'provider_remove',
];

const QUALIFIED = /\b[a-z]+_[a-z_]+(?: t_[a-z0-9]+)? (?:\(in Claude Code\)|in Claude Code)/g;

/** Rewrites in order: the specific phrasings first, then the tool names left over. */
const CLI_REWRITES: ReadonlyArray<readonly [RegExp, string]> = [
  // "provider_key {…} (or run `delegate provider-key x` in a terminal)" says it twice.
  [
    /provider_key \{"profile": "([^"]+)"\}(?: \(or run `delegate provider-key \1` in a terminal\))?/g,
    '`delegate provider-key $1`',
  ],
  [/\bprovider_key\b(?! \{)/g, '`delegate provider-key <profile>`'],
  [/\bprovider_set with default: true\b/g, '"defaultProfile" in config.json'],
  [/\bwith provider_set or in\b/g, 'in'],
  [/\b(?:with|call) provider_set\b/g, 'in config.json (in DELEGATE_HOME, default ~/.delegate)'],
  [/\(provider_set\)/g, '(in config.json)'],
  [/\bprovider_set\b/g, 'a profile in config.json'],
  [/\bapi_key_env\b/g, 'apiKeyEnv'],
  [/\b[Cc]all providers\b/g, 'Run delegate doctor'],
  ...TASK_COMMANDS.flatMap(([tool, command]): Array<readonly [RegExp, string]> => [
    [new RegExp(`\\b${tool} (t_[a-z0-9]+)\\b`, 'g'), `delegate ${command} $1`],
    [new RegExp(`\\b${tool}\\b`, 'g'), `delegate ${command} <task id>`],
  ]),
  [/\btask_status\b/g, 'delegate tasks'],
  ...CLAUDE_CODE_ONLY.map((tool): readonly [RegExp, string] => [
    new RegExp(`\\b${tool}\\b( t_[a-z0-9]+\\b)?`, 'g'),
    `${tool}$1 (in Claude Code)`,
  ]),
];

/**
 * Text from the code the MCP tools share with the CLI (provider checks, key and profile
 * errors), as a terminal user should read it: a tool the CLI has a command for becomes that
 * command, a setting made with a tool becomes the config.json field, and any other tool is named
 * as Claude Code's. For messages and reports only, never for a model's answer or a patch.
 */
export function inCliWords(text: string): string {
  // A tool already named as Claude Code's stays as it is.
  const kept: string[] = [];
  const held = text.replace(QUALIFIED, (match) => `\uE000${kept.push(match) - 1}\uE000`);
  const rewritten = CLI_REWRITES.reduce(
    (result, [pattern, replacement]) => result.replace(pattern, replacement),
    held,
  );
  return rewritten.replace(/\uE000(\d+)\uE000/g, (_match, index: string) => kept[Number(index)]!);
}
