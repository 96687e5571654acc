/**
 * The one task feature outcomes are scored under, simple enough to explain in a line: the agent
 * the work runs as, else the first kind whose words the task's first line holds — in this
 * order, so "fix the failing test" is a fix.
 */
const KINDS: ReadonlyArray<[string, RegExp]> = [
  ['fix', /\b(fix\w*|bugs?|broken|crash\w*|regressions?|failing|fails?)\b/],
  ['refactor', /\b(refactor\w*|renam\w*|mov(e|ing)|extract\w*|clean\s?up|simplif\w*|split\w*)\b/],
  ['tests', /\b(tests?|testing|specs?|coverage)\b/],
  ['docs', /\b(docs?|document\w*|readme|comments?|docstrings?|changelog)\b/],
  ['question', /^(what|where|which|why|how|who|does|is|are|can|list|find|explain)\b/],
];

/** Work that names no kind: adding or changing behaviour. */
export const DEFAULT_KIND = 'feature';

/** The kinds, in the order they are tried, for docs and help. */
export const KIND_NAMES = [...KINDS.map(([name]) => name), DEFAULT_KIND];

export function taskKind(task: string, agent?: string): string {
  if (agent) return `agent:${agent}`;
  const firstLine = (task.trim().split('\n')[0] ?? '').toLowerCase();
  return KINDS.find(([, words]) => words.test(firstLine))?.[0] ?? DEFAULT_KIND;
}

/** Whether a profile's `use` line names this kind of work (a prior for `auto`). */
export function useMentions(use: string, kind: string): boolean {
  const words = KINDS.find(([name]) => name === kind)?.[1];
  const text = use.toLowerCase();
  if (kind.startsWith('agent:')) return text.includes(kind.slice('agent:'.length).toLowerCase());
  return words ? words.test(text) : text.includes(kind);
}
