import type { EventSourceMessage } from 'eventsource-parser';
import { getJson, parseJson, postStream, routingFacts } from '../http-stream.ts';
import { shouldReplayReasoning } from '../reasoning.ts';
import {
  ProviderError,
  withUsage,
  type CallOptions,
  type Endpoint,
  type GenerateRequest,
  type GenerateResult,
  type ModelClient,
} from '../spec.ts';
import { toWireMessages, toWireTools } from './openai-messages.ts';
import { OpenAiStream, type ChatChunk } from './openai-stream.ts';

/** OpenAI Chat Completions (`<baseUrl>/chat/completions`), streamed, with tool calls. */
export function createOpenAiClient(endpoint: Endpoint): ModelClient {
  const headers = (): Record<string, string> => ({
    ...(endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {}),
    ...endpoint.headers,
  });
  return {
    format: 'openai',
    async generate(request: GenerateRequest, options: CallOptions = {}): Promise<GenerateResult> {
      const url = `${endpoint.baseUrl}/chat/completions`;
      const started = Date.now();
      const stream = new OpenAiStream(url);
      let sawDone = false;
      const responseHeaders = await postStream(
        url,
        { headers: headers(), body: toRequestBody(endpoint, request) },
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
      Buffer.byteLength(JSON.stringify(toRequestBody(endpoint, request))),
  };
}

function toRequestBody(endpoint: Endpoint, request: GenerateRequest): Record<string, unknown> {
  return {
    model: endpoint.model,
    messages: toWireMessages(request, (producedBy) => shouldReplayReasoning(endpoint, producedBy)),
    ...(request.tools?.length ? { tools: toWireTools(request.tools) } : {}),
    max_tokens: request.maxOutputTokens,
    stream: true,
    // Without this, OpenAI-style servers omit token usage from streamed replies.
    stream_options: { include_usage: true },
  };
}
