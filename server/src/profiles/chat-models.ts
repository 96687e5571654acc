import { getJson } from '../wire/http-stream.ts';

/** Names of models that embed, rerank, transcribe or speak: none of them answers a chat call. */
const NOT_CHAT_NAME = /embed|rerank|whisper|(^|[^a-z])tts([^a-z]|$)|speech|transcri|moderation/i;

/**
 * The first of a server's models that can chat, and the ones before it that cannot. Ollama
 * says so itself (`/api/show` lists `capabilities`, chat models have `completion`); for other
 * servers, or an Ollama too old to say, the name decides. Undefined when none can chat.
 */
export async function firstChatModel(
  server: { name: string; baseUrl: string },
  models: string[],
  timeoutMs: number,
): Promise<{ model: string; skipped: string[] } | undefined> {
  const skipped: string[] = [];
  for (const model of models) {
    const capabilities =
      server.name === 'Ollama'
        ? await ollamaCapabilities(server.baseUrl, model, timeoutMs)
        : undefined;
    const canChat = capabilities ? capabilities.includes('completion') : !NOT_CHAT_NAME.test(model);
    if (canChat) return { model, skipped };
    skipped.push(model);
  }
  return undefined;
}

/** Ollama's native API sits at the host root, beside its OpenAI-compatible `/v1`. */
async function ollamaCapabilities(
  baseUrl: string,
  model: string,
  timeoutMs: number,
): Promise<string[] | undefined> {
  const root = baseUrl.replace(/\/v1\/?$/, '');
  const body = (await getJson(`${root}/api/show`, {}, timeoutMs, { model }).catch(
    () => undefined,
  )) as { capabilities?: unknown } | undefined;
  const capabilities = body?.capabilities;
  return Array.isArray(capabilities) && capabilities.every((entry) => typeof entry === 'string')
    ? capabilities
    : undefined;
}
