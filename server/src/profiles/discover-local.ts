import { join } from 'node:path';
import { getJson } from '../wire/http-stream.ts';
import { UserError } from '../util/user-error.ts';
import { secretRedactor } from '../util/secret-redactor.ts';
import { knownSecrets } from './known-secrets.ts';
import { resolveDataHome, type Environment } from '../config/paths.ts';
import { firstChatModel } from './chat-models.ts';
import type { DiscoveredSnapshot, ResolvedProfile } from '../config/resolved-profile.ts';

/** The usual ports of local OpenAI-compatible servers, in the order they are preferred. */
export const LOCAL_SERVERS: ReadonlyArray<{ name: string; baseUrl: string }> = [
  { name: 'Ollama', baseUrl: 'http://127.0.0.1:11434/v1' },
  { name: 'LM Studio', baseUrl: 'http://127.0.0.1:1234/v1' },
  { name: 'llama.cpp', baseUrl: 'http://127.0.0.1:8080/v1' },
  { name: 'vLLM', baseUrl: 'http://127.0.0.1:8000/v1' },
  { name: 'LiteLLM', baseUrl: 'http://127.0.0.1:4000/v1' },
];

export const DISCOVERED_PROFILE_NAME = 'local';
const PROBE_TIMEOUT_MS = 800;

export interface DiscoveredServer {
  name: string;
  baseUrl: string;
  /** Every model the server lists, in its order. */
  models: string[];
  /** The first listed model that can chat: the one calls use. */
  model: string;
  /** Models listed before it that cannot chat (embedding, rerank, speech…), passed over. */
  skipped: string[];
}

/**
 * Probes the usual local ports at once and returns the first (in preference order) that
 * serves at least one model that can chat; undefined when no server answers. A server that
 * answers but lists no model that can chat (only embedding models, or none pulled yet) is no
 * worker either, and since silence would read as "no server found" it is an error naming the
 * server, its models and how to get a chat model. Tests point it elsewhere with
 * `DELEGATE_DISCOVERY_URLS_FOR_TEST` (comma-separated `name=baseUrl` pairs).
 */
export async function discoverLocalServer(env: Environment): Promise<DiscoveredServer | undefined> {
  const candidates = candidatesFrom(env);
  const probes = candidates.map(async (candidate) => ({
    ...candidate,
    models: await listOpenAiModels(candidate.baseUrl, PROBE_TIMEOUT_MS).catch(() => undefined),
  }));
  // No key is sent to a probe, but a model name is shown and reused: it carries no key either.
  const redactor = secretRedactor(knownSecrets(resolveDataHome(env), [], env));
  const withoutChat: Array<{ name: string; baseUrl: string; models: string[] }> = [];
  for (const result of await Promise.all(probes)) {
    if (result.models === undefined) continue;
    const models = redactor.value(result.models);
    const pick = await firstChatModel(result, models, PROBE_TIMEOUT_MS);
    if (pick) return { ...result, models, ...pick };
    withoutChat.push({ ...result, models });
  }
  if (withoutChat.length > 0) throw new UserError(noChatModelMessage(withoutChat, env));
  return undefined;
}

/** How to get a chat model onto each kind of local server. */
const PULL_HINTS: Record<string, string> = {
  Ollama:
    'pull one: `ollama pull qwen3-coder:30b` (any model whose `ollama show` lists "completion")',
  'LM Studio': 'download a chat model in LM Studio and load it (or `lms load <model>`)',
  'llama.cpp': 'restart llama-server with a chat model: `llama-server -m <chat model>.gguf`',
  vLLM: 'serve a chat model: `vllm serve <chat model>`',
  LiteLLM: 'add a chat model to its model_list',
};

function noChatModelMessage(
  servers: ReadonlyArray<{ name: string; baseUrl: string; models: string[] }>,
  env: Environment,
): string {
  const found = servers.map(({ name, baseUrl, models }) => {
    const listed = models.length
      ? `lists only models that cannot chat (${models.slice(0, 8).join(', ')}${models.length > 8 ? ', …' : ''})`
      : 'lists no models';
    return `${name} at ${baseUrl} ${listed}; ${PULL_HINTS[name] ?? 'load a chat model on it'}.`;
  });
  const first = servers[0]!;
  const config = join(resolveDataHome(env), 'config.json');
  return (
    `No worker to use: a local model server answered, but with no model that can chat (embedding, rerank ` +
    `and speech models cannot answer a call). ${found.join(' ')} delegate picks a chat model up on the next ` +
    `call. To pin one (also when a model can chat but its name says otherwise), add a profile to ${config}: ` +
    `{"profiles":{"local":{"format":"openai","baseUrl":"${first.baseUrl}","model":"<chat model>","local":true}}}.`
  );
}

export function discoveredProfile(server: DiscoveredServer): ResolvedProfile {
  const skipped = server.skipped.length
    ? `; skipped ${server.skipped.join(', ')}: cannot chat`
    : '';
  return {
    name: DISCOVERED_PROFILE_NAME,
    format: 'openai',
    baseUrl: server.baseUrl,
    model: server.model,
    local: true,
    use: `auto-detected ${server.name} at ${server.baseUrl}`,
    source: 'discovered',
    origin: `${server.name} found at ${server.baseUrl}, first chat model "${server.model}"${skipped}`,
    discovered: {
      server: server.name,
      format: 'openai',
      baseUrl: server.baseUrl,
      model: server.model,
      local: true,
    },
  };
}

/** The server a task's snapshot names, as discovery would return it (no probe). */
export function serverFromSnapshot(snapshot: DiscoveredSnapshot): DiscoveredServer {
  return {
    name: snapshot.server,
    baseUrl: snapshot.baseUrl,
    models: [snapshot.model],
    model: snapshot.model,
    skipped: [],
  };
}

/** How to choose another model than the discovered one. */
export const PIN_HINT =
  'to use another model, add a profile with provider_set or in config.json (its "model" picks it)';

export function describeLocalPorts(): string {
  return LOCAL_SERVERS.map((server) => `${server.name} ${new URL(server.baseUrl).port}`).join(', ');
}

/**
 * Through the same safe client as model calls: discovery never reaches a metadata address either.
 * Undefined unless the answer is a model list (`data` an array): another kind of server on the
 * port is no model server.
 */
async function listOpenAiModels(baseUrl: string, timeoutMs: number): Promise<string[] | undefined> {
  const body = (await getJson(`${baseUrl}/models`, {}, timeoutMs)) as { data?: unknown } | null;
  if (!Array.isArray(body?.data)) return undefined;
  return (body.data as Array<{ id?: unknown }>).flatMap((entry) =>
    typeof entry?.id === 'string' ? [entry.id] : [],
  );
}

function candidatesFrom(env: Environment): Array<{ name: string; baseUrl: string }> {
  const override = env.DELEGATE_DISCOVERY_URLS_FOR_TEST;
  if (override === undefined) return [...LOCAL_SERVERS];
  return override
    .split(',')
    .map((pair) => pair.trim())
    .filter(Boolean)
    .map((pair) => {
      const [name = '', baseUrl = ''] = pair.split('=');
      return { name, baseUrl };
    });
}
