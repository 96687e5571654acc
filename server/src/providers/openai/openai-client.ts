import type { EventSourceMessage } from 'eventsource-parser';
import { getJson, parseJson, postStream, routingFacts } from '../../wire/http-stream.ts';
import { shouldReplayReasoning } from '../reasoning.ts';
import {
  ProviderError,
  withUsage,
  type CallOptions,
  type Endpoint,
  type GenerateRequest,
  type GenerateResult,
  type LearnedFacts,
  type ModelClient,
} from '../../wire/spec.ts';
import { toWireMessages, toWireTools } from './openai-messages.ts';
import { OpenAiStream, type ChatChunk } from './openai-stream.ts';

/** OpenAI Chat Completions (`<baseUrl>/chat/completions`), streamed, with tool calls. */
export function createOpenAiClient(endpoint: Endpoint): ModelClient {
  const headers = (): Record<string, string> => ({
    ...(endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {}),
    ...endpoint.headers,
  });
  // Without a memo shared by its caller (calls/), the client remembers for itself.
  const learned = endpoint.learned ?? {};
  const call = async (
    request: GenerateRequest,
    options: CallOptions,
    limitField: OutputLimitField,
  ): Promise<GenerateResult> => {
    const url = `${endpoint.baseUrl}/chat/completions`;
    const started = Date.now();
    const stream = new OpenAiStream(url);
    let sawDone = false;
    const responseHeaders = await postStream(
      url,
      { headers: headers(), body: toRequestBody(endpoint, request, limitField) },
      options,
      {
        onEvent: (event: EventSourceMessage) => {
          if (event.data.trim() === '[DONE]') sawDone = true;
          else stream.absorb(parseJson(url, event.data) as ChatChunk);
        },
        onJson: (body) => {
          stream.absorb(body as ChatChunk);
          sawDone = true;
        },
        usage: () => stream.reportedUsage,
      },
    );
    if (!sawDone && !stream.finished) {
      const error = new ProviderError(
        `The reply from ${url} ended before the model finished (no finish_reason).`,
        'protocol',
      );
      throw withUsage(error, stream.reportedUsage);
    }
    const result = stream.result(endpoint.model);
    const routedVia = routingFacts(responseHeaders);
    return {
      ...result,
      ...(routedVia ? { routedVia } : {}),
      latencyMs: Date.now() - started,
      attempts: 1,
    };
  };
  return {
    format: 'openai',
    async generate(request: GenerateRequest, options: CallOptions = {}): Promise<GenerateResult> {
      const field = outputLimitField(endpoint.model, learned);
      try {
        return await call(request, options, field);
      } catch (error) {
        if (field !== 'max_tokens' || !isMaxTokensRefused(error)) throw error;
        // A reasoning model: the same request once more, and this field from now on.
        learned.takesMaxCompletionTokens = true;
        return call(request, options, 'max_completion_tokens');
      }
    },
    async listModels(options: CallOptions = {}): Promise<string[]> {
      const body = (await getJson(
        `${endpoint.baseUrl}/models`,
        headers(),
        options.totalTimeoutMs ?? 5_000,
      )) as {
        data?: Array<{ id?: unknown }>;
      };
      return (body.data ?? []).flatMap((model) => (typeof model.id === 'string' ? [model.id] : []));
    },
    requestBytes: (request: GenerateRequest) =>
      Buffer.byteLength(
        JSON.stringify(toRequestBody(endpoint, request, outputLimitField(endpoint.model, learned))),
      ),
  };
}

type OutputLimitField = 'max_tokens' | 'max_completion_tokens';

/**
 * OpenAI's reasoning models (o1, o3, o4-mini, gpt-5…) refuse `max_tokens` and take
 * `max_completion_tokens`; other OpenAI-style servers know only `max_tokens`.
 */
const REASONING_MODEL = /^(?:[\w.-]+\/)*(?:o\d+(?:-|$)|gpt-5)/i;

function outputLimitField(model: string, learned: LearnedFacts): OutputLimitField {
  return learned.takesMaxCompletionTokens || REASONING_MODEL.test(model)
    ? 'max_completion_tokens'
    : 'max_tokens';
}

/** "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead." */
function isMaxTokensRefused(error: unknown): boolean {
  return (
    error instanceof ProviderError &&
    error.status === 400 &&
    /'max_tokens'.*'max_completion_tokens'/s.test(error.message)
  );
}

function toRequestBody(
  endpoint: Endpoint,
  request: GenerateRequest,
  limitField: OutputLimitField,
): Record<string, unknown> {
  return {
    model: endpoint.model,
    messages: toWireMessages(request, (producedBy) => shouldReplayReasoning(endpoint, producedBy)),
    ...(request.tools?.length ? { tools: toWireTools(request.tools) } : {}),
    [limitField]: request.maxOutputTokens,
    stream: true,
    // Without this, OpenAI-style servers omit token usage from streamed replies.
    stream_options: { include_usage: true },
  };
}
