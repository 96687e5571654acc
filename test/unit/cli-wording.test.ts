import { describe, expect, it } from 'vitest';
import { inCliWords } from '../../server/src/util/wording.ts';
import { BARE_TOOL } from '../helpers/tool-names.ts';

describe('inCliWords: the messages engines share with the tools, for a terminal', () => {
  it.each([
    [
      'stored key was entered for https://a, NOT sent to https://b: run provider_key again',
      'stored key was entered for https://a, NOT sent to https://b: run `delegate provider-key <profile>` again',
    ],
    [
      'Store one with provider_key {"profile": "deep"} (or run `delegate provider-key deep` in a terminal).',
      'Store one with `delegate provider-key deep`.',
    ],
    [
      'If it needs one, call provider_key {"profile": "x"} so the user can enter it.',
      'If it needs one, call `delegate provider-key x` so the user can enter it.',
    ],
    [
      'To use another, add a profile with provider_set or in /h/config.json (its "model" picks it).',
      'To use another, add a profile in /h/config.json (its "model" picks it).',
    ],
    [
      'save the profile to your config with provider_set, or store a key for it with provider_key.',
      'save the profile to your config in config.json (in DELEGATE_HOME, default ~/.delegate), or store a key for it with `delegate provider-key <profile>`.',
    ],
    [
      'add it to your config under another name (provider_set), or',
      'add it to your config under another name (in config.json), or',
    ],
    [
      'To use a variable, set api_key_env with provider_set instead.',
      'To use a variable, set apiKeyEnv in config.json (in DELEGATE_HOME, default ~/.delegate) instead.',
    ],
    [
      'no default is set now (provider_set with default: true sets one).',
      'no default is set now ("defaultProfile" in config.json sets one).',
    ],
    [
      'see task_result t_abc123, then task_cleanup t_abc123; list with task_status',
      'see delegate result t_abc123, then delegate cleanup t_abc123; list with delegate tasks',
    ],
    ['cancel it with task_cancel first', 'cancel it with delegate cancel <task id> first'],
    [
      'Use task_start with it, or another profile for delegate.',
      'Use task_start (in Claude Code) with it, or another profile for delegate.',
    ],
    ['reply with task_answer t_x (in Claude Code)', 'reply with task_answer t_x (in Claude Code)'],
    [
      'Unknown profile "x". Profiles: a. Call providers to see them, or omit profile to use the default.',
      'Unknown profile "x". Profiles: a. Run delegate doctor to see them, or omit profile to use the default.',
    ],
    ['the delegate and providers tools and usage', 'the delegate and providers tools and usage'],
    [
      'Create it first in config.json, or provider_set in Claude Code.',
      'Create it first in config.json, or provider_set in Claude Code.',
    ],
    [
      'Create it first with a profile in config.json, or provider_set (in Claude Code).',
      'Create it first with a profile in config.json, or provider_set (in Claude Code).',
    ],
  ])('%s', (input, expected) => {
    const output = inCliWords(input);
    expect(output).toBe(expected);
    expect(output).not.toMatch(BARE_TOOL);
    // Applying it twice changes nothing more.
    expect(inCliWords(output)).toBe(output);
  });
});
