import type { Endpoint } from '../wire/spec.ts';

/**
 * Models whose OpenAI-style endpoints need their earlier `reasoning_content` sent back within
 * a tool loop (DeepSeek thinking mode, Kimi K2 thinking, MiniMax M2 interleaved thinking).
 * Other endpoints ignore it at best and reject it at worst, so it is dropped for them.
 */
const REQUIRES_REPLAY = /deepseek|kimi|moonshot|minimax/i;

/** Whether a thinking block produced by `producedBy` goes back to `endpoint`. */
export function shouldReplayReasoning(endpoint: Endpoint, producedBy: string | undefined): boolean {
  const mode = endpoint.replayReasoning ?? 'auto';
  if (mode !== 'auto') return mode === 'always';
  const model = producedBy ?? endpoint.model;
  return REQUIRES_REPLAY.test(model) && isSameModel(endpoint.model, model);
}

/**
 * Whether the model that answered is the one asked for: equal, or a dated/pinned variant of it
 * (`gpt-4o` → `gpt-4o-2024-08-06`), or the same name behind a provider prefix (`openai/gpt-4o`).
 */
export function isSameModel(asked: string, answered: string): boolean {
  const a = asked.toLowerCase();
  const b = answered.toLowerCase();
  return (
    a === b ||
    b.startsWith(`${a}-`) ||
    b.endsWith(`/${a}`) ||
    a.endsWith(`/${b}`) ||
    a.startsWith(`${b}-`)
  );
}
