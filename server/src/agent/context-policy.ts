/**
 * Keeps a long worker run's request size bounded. Two rules, both per run (no shared state):
 *
 * - Eviction: the worker tools' results stay verbatim until together they pass
 *   `evictAboveBytes`; then the oldest become a one-line marker (tool, target, size, "call
 *   again") until the rest is under `evictDownToBytes`. Evicting in batches rather than one
 *   result per turn leaves the conversation's prefix unchanged for several turns, so prompt
 *   caches (cloud) and prefix caches (llama.cpp, Ollama) keep working in between. The latest
 *   turn's results, small results, the task message, texts and thinking blocks are never
 *   touched, and a tool_use always keeps its tool_result (only the result's text changes).
 * - Repeat cache: a read-only call identical (name + canonical JSON input) to an earlier one,
 *   with no write since, is answered from that result instead of running again: a pointer to
 *   it while it is still shown in full, the text itself once it was evicted or when it is
 *   short. Any non-read-only call (run_bash included), any answer or message from the
 *   supervisor and any test run between fix rounds clears the cache.
 */
import type { Block } from '../wire/spec.ts';

type ToolResultBlock = Extract<Block, { type: 'tool_result' }>;

export interface ContextPolicySettings {
  /** Once the tool results shown verbatim total more than this, the oldest are evicted… */
  evictAboveBytes: number;
  /** …until they total at most this (the latest turn's results are always kept). */
  evictDownToBytes: number;
  /** Results up to this size are never evicted and are repeated in full: a marker would save next to nothing. */
  smallResultBytes: number;
  isRepeatCacheOn: boolean;
}

/** ~64 KB ≈ 16–20k tokens of tool output at most: room for a 60 KB file slice plus the turns around it within a 32k-token local context. */
export const CONTEXT_POLICY: ContextPolicySettings = {
  evictAboveBytes: 64 * 1024,
  evictDownToBytes: 32 * 1024,
  smallResultBytes: 1024,
  isRepeatCacheOn: true,
};

/** Full history, nothing cached: what the loop did before this policy (for comparisons). */
export const NAIVE_CONTEXT: ContextPolicySettings = {
  evictAboveBytes: Number.POSITIVE_INFINITY,
  evictDownToBytes: Number.POSITIVE_INFINITY,
  smallResultBytes: 0,
  isRepeatCacheOn: false,
};

/** How a worker tool call is shown in markers and notes, e.g. `read_file src/x.ts`. */
export interface ToolCallFacts {
  name: string;
  input: unknown;
  label: string;
  isReadOnly: boolean;
  turn: number;
  /** Answered by the repeat cache: shown (and evictable) like any result, not cached again. */
  isRepeat?: boolean;
}

interface Shown {
  block: ToolResultBlock;
  content: string;
  bytes: number;
  facts: ToolCallFacts;
  isEvicted: boolean;
}

const MAX_CACHED_CALLS = 100;

export interface ContextPolicy {
  /** The reply to a read-only call from an identical earlier one, if nothing was written since. */
  repeatOf(name: string, input: unknown): string | undefined;
  /** Records a worker tool's result, just added to the history. */
  track(block: ToolResultBlock, facts: ToolCallFacts): void;
  /** Files may have changed (a write, a command, the supervisor): earlier reads no longer hold. */
  forgetReads(): void;
  /** After a turn's results are in the history: evicts the oldest past the budget. */
  evict(turn: number): void;
}

export function createContextPolicy(
  settings: ContextPolicySettings = CONTEXT_POLICY,
): ContextPolicy {
  const queue: Shown[] = [];
  const cache = new Map<string, Shown>();
  let shownBytes = 0;
  return {
    repeatOf(name, input) {
      if (!settings.isRepeatCacheOn) return undefined;
      const earlier = cache.get(cacheKey(name, input));
      return earlier && repeatReply(earlier, settings);
    },
    track(block, facts) {
      const bytes = Buffer.byteLength(block.content);
      const shown: Shown = { block, content: block.content, bytes, facts, isEvicted: false };
      if (bytes > settings.smallResultBytes) {
        queue.push(shown);
        shownBytes += bytes;
      }
      if (!settings.isRepeatCacheOn || !facts.isReadOnly || facts.isRepeat || block.isError) return;
      const key = cacheKey(facts.name, facts.input);
      cache.delete(key);
      cache.set(key, shown);
      if (cache.size > MAX_CACHED_CALLS) cache.delete(cache.keys().next().value as string);
    },
    forgetReads() {
      cache.clear();
    },
    evict(turn) {
      if (shownBytes <= settings.evictAboveBytes) return;
      while (shownBytes > settings.evictDownToBytes && queue[0] && queue[0].facts.turn < turn) {
        const oldest = queue.shift() as Shown;
        oldest.block.content = evictionMarker(oldest);
        oldest.isEvicted = true;
        shownBytes -= oldest.bytes;
      }
    },
  };
}

function evictionMarker(shown: Shown): string {
  const again = shown.facts.isReadOnly
    ? 'call again to re-read'
    : 'run it again only if you need the output';
  return `[evicted: ${shown.facts.label} (${kilobytes(shown.bytes)}) — ${again}]`;
}

function repeatReply(earlier: Shown, settings: ContextPolicySettings): string {
  const same = `Same as your identical ${earlier.facts.name} call earlier (nothing was written since)`;
  if (!earlier.isEvicted && earlier.bytes > settings.smallResultBytes)
    return `${same}; that result is still shown above, unchanged. Do not repeat calls: use it, or take the next step.`;
  return `[${same}:]\n${earlier.content}`;
}

function kilobytes(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KB`;
}

function cacheKey(name: string, input: unknown): string {
  return `${name}\u0000${canonicalJson(input)}`;
}

/** JSON with object keys sorted at every level, so key order does not make two calls differ. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value ?? null, (_key, item: unknown) =>
    item && typeof item === 'object' && !Array.isArray(item)
      ? Object.fromEntries(
          Object.entries(item as Record<string, unknown>).sort(([a], [b]) =>
            a < b ? -1 : a > b ? 1 : 0,
          ),
        )
      : item,
  );
}
