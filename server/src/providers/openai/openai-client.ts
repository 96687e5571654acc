import type { EventSourceMessage } from 'eventsource-parser';
import { getJson, parseJson, postStream } from '../http-stream.ts';
import {
  ProviderError,
  type Block,
  type CallOptions,
  type Endpoint,
  type GenerateRequest,
  type GenerateResult,
  type Message,
  type ModelClient,
  type StopReason,
  type Usage,
} from '../spec.ts';

interface ChatDelta {
  content?: string | null;
  reasoning_content?: string | null;
  reasoning?: string | null;
}
interface ChatChunk {
  model?: string;
  choices?: Array<{ delta?: ChatDelta; message?: ChatDelta; finish_reason?: string | null }>;
  usage?: {
    prompt_tokens?: number;
    completion_tokens?: number;
    prompt_tokens_details?: { cached_tokens?: number };
    completion_tokens_details?: { reasoning_tokens?: number };
  };
  error?: { message?: string };
}

const STOP_REASONS: Record<string, StopReason> = {
  stop: 'end',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  content_filter: 'refusal',
};

/** OpenAI Chat Completions (`<baseUrl>/chat/completions`), streamed. */
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
      const state = { text: '', reasoning: '', model: '', finish: undefined as string | undefined };
      let usage: Usage = {
        inputTokens: 0,
        outputTokens: 0,
        cachedInputTokens: 0,
        reasoningTokens: 0,
      };
      const absorb = (chunk: ChatChunk) => {
        if (chunk.error) {
          throw new ProviderError(
            `${url} reported an error mid-stream: ${chunk.error.message}`,
            'protocol',
          );
        }
        if (chunk.model) state.model = chunk.model;
        const choice = chunk.choices?.[0];
        const delta = choice?.delta ?? choice?.message;
        state.text += delta?.content ?? '';
        state.reasoning += delta?.reasoning_content ?? delta?.reasoning ?? '';
        if (choice?.finish_reason) state.finish = choice.finish_reason;
        if (chunk.usage) usage = toUsage(chunk.usage);
      };
      await postStream(
        url,
        { headers: headers(), body: toRequestBody(endpoint.model, request) },
        options,
        {
          onEvent: (event: EventSourceMessage) => {
            if (event.data.trim() === '[DONE]') return;
            absorb(parseJson(url, event.data) as ChatChunk);
          },
          onJson: (body) => absorb(body as ChatChunk),
        },
      );
      const content: Block[] = [];
      if (state.reasoning) content.push({ type: 'thinking', thinking: state.reasoning });
      if (state.text) content.push({ type: 'text', text: state.text });
      return {
        content,
        stopReason: state.finish ? (STOP_REASONS[state.finish] ?? 'other') : 'other',
        rawStopReason: state.finish,
        usage,
        modelAnswered: state.model || endpoint.model,
        latencyMs: Date.now() - started,
      };
    },
    async listModels(options: CallOptions = {}): Promise<string[]> {
      const body = (await getJson(
        `${endpoint.baseUrl}/models`,
        headers(),
        options.totalTimeoutMs ?? 5_000,
      )) as { data?: Array<{ id?: unknown }> };
      return (body.data ?? []).flatMap((model) => (typeof model.id === 'string' ? [model.id] : []));
    },
  };
}

function toRequestBody(model: string, request: GenerateRequest): Record<string, unknown> {
  const messages: Array<{ role: string; content: string }> = [];
  if (request.system) messages.push({ role: 'system', content: request.system });
  for (const message of request.messages) messages.push(toWireMessage(message));
  return {
    model,
    messages,
    max_tokens: request.maxOutputTokens,
    stream: true,
    // Without this, OpenAI-style servers omit token usage from streamed replies.
    stream_options: { include_usage: true },
  };
}

function toWireMessage(message: Message): { role: string; content: string } {
  const text = message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
  return { role: message.role, content: text };
}

function toUsage(usage: NonNullable<ChatChunk['usage']>): Usage {
  return {
    inputTokens: usage.prompt_tokens ?? 0,
    outputTokens: usage.completion_tokens ?? 0,
    cachedInputTokens: usage.prompt_tokens_details?.cached_tokens ?? 0,
    reasoningTokens: usage.completion_tokens_details?.reasoning_tokens ?? 0,
  };
}
