/**
 * What the loop tells the worker about its turns: a countdown near the budget, and one nudge
 * when a turn ends without a tool call and without something that reads as a final answer.
 */
import type { StopReason } from '../wire/spec.ts';
import { plural } from '../util/plural.ts';

/** Turns left (the coming one included) at which the worker is told to wrap up. */
export const COUNTDOWN_AT: readonly number[] = [5, 3, 1];

/** The countdown note to send with the coming turn, if it is one of the countdown points. */
export function countdownNote(turnsLeft: number): string | undefined {
  if (!COUNTDOWN_AT.includes(turnsLeft)) return undefined;
  if (turnsLeft === 1) {
    return (
      '[Turn budget: this is your last turn. Reply now with your final answer (what you did, how you ' +
      'verified it, what is left), without tool calls: they would run, but you would not see their results.]'
    );
  }
  return (
    `[Turn budget: ${plural(turnsLeft, 'turn')} left, this one included. Wrap up: finish the current step, save ` +
    'your state (commit, or write down what is done and what is left), then give your final answer.]'
  );
}

export const NUDGE =
  '[Your reply has no tool call and does not read as a final answer. If the work is not finished, ' +
  'continue by calling a tool (a real tool call, not text describing one). If it is finished, reply ' +
  'with your final summary: what you did, how you verified it, what is left. Another reply like the ' +
  'last one ends the task.]';

/** "Let me check…", "I'll now run…", "Next, I need to…": the worker says what it will do, then stops. */
const INTENT =
  /^(?:(?:ok(?:ay)?|now|next|first|then|so|alright),?\s+)*(?:let me(?! know)|let's|i will|i'll|i am going to|i'm going to|i need to|we need to|i should)\b/i;
/** A tool call written as text, as local models do when their tool-call template fails. */
const TOOL_CALL_AS_TEXT =
  /<tool_call>|<function[=>]|"(?:name|tool)"\s*:\s*"\w+"\s*,\s*"(?:arguments|input|parameters)"\s*:/i;

/**
 * A turn without a tool call that does not look like the end: cut at the output limit, empty,
 * a tool call written as text, ending in a colon or an ellipsis, or whose last sentence is a
 * question or an announcement of what the worker is about to do.
 */
export function isUnclearEnding(text: string, stopReason: StopReason): boolean {
  if (stopReason === 'max_tokens') return true;
  const trimmed = text.trim();
  if (trimmed === '' || TOOL_CALL_AS_TEXT.test(trimmed) || /(?::|\.\.\.|…)$/.test(trimmed))
    return true;
  const lastLine = trimmed.slice(trimmed.lastIndexOf('\n') + 1).replace(/^[-*#>\d.)\s]+/, '');
  const lastSentence = lastLine.split(/(?<=[.!?])\s+/).pop() ?? '';
  return lastSentence.endsWith('?') || INTENT.test(lastSentence);
}
