import type { EventSourceMessage } from 'eventsource-parser';
import { getJson, parseJson, postStream, routingFacts } from '../../wire/http-stream.ts';
import {
  ProviderError,
  withUsage,
  type CallOptions,
  type Endpoint,
  type GenerateRequest,
  type GenerateResult,
  type ModelClient,
} from '../../wire/spec.ts';
import { toRequestBody } from './anthropic-request.ts';
import { AnthropicStream, type WireEvent, type WireMessage } from './anthropic-stream.ts';

const ANTHROPIC_VERSION = '2023-06-01';

/** Anthropic Messages (`<baseUrl>/v1/messages`), streamed, with tool use and thinking. */
export function createAnthropicClient(endpoint: Endpoint): ModelClient {
  const headers = (): Record<string, string> => ({
    'anthropic-version': ANTHROPIC_VERSION,
    ...(endpoint.apiKey ? { 'x-api-key': endpoint.apiKey } : {}),
    ...endpoint.headers,
  });
  return {
    format: 'anthropic',
    async generate(request: GenerateRequest, options: CallOptions = {}): Promise<GenerateResult> {
      const url = `${endpoint.baseUrl}/v1/messages`;
      const started = Date.now();
      const stream = new AnthropicStream(url);
      const responseHeaders = await postStream(
        url,
        { headers: headers(), body: toRequestBody(endpoint, request) },
        options,
        {
          onEvent: (event: EventSourceMessage) =>
            stream.absorb(parseJson(url, event.data) as WireEvent),
          onJson: (body) => stream.absorbMessage(body as WireMessage),
          usage: () => stream.reportedUsage,
        },
      );
      if (!stream.finished) {
        const error = new ProviderError(
          `The reply from ${url} ended before the model finished (no message_stop).`,
          'protocol',
        );
        throw withUsage(error, stream.reportedUsage);
      }
      const routedVia = routingFacts(responseHeaders);
      return {
        ...stream.result(endpoint.model),
        ...(routedVia ? { routedVia } : {}),
        latencyMs: Date.now() - started,
        attempts: 1,
      };
    },
    async listModels(options: CallOptions = {}): Promise<string[]> {
      const body = (await getJson(
        `${endpoint.baseUrl}/v1/models`,
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
