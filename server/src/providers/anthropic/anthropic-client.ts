import type { EventSourceMessage } from 'eventsource-parser';
import { getJson, parseJson, postStream } from '../http-stream.ts';
import {
  ProviderError,
  type Block,
  type CallOptions,
  type Endpoint,
  type GenerateRequest,
  type GenerateResult,
  type ModelClient,
  type StopReason,
  type Usage,
} from '../spec.ts';

const ANTHROPIC_VERSION = '2023-06-01';

interface WireUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_read_input_tokens?: number;
}
interface WireBlock {
  type: string;
  text?: string;
  thinking?: string;
  signature?: string;
}
interface WireEvent {
  type: string;
  index?: number;
  message?: { model?: string; usage?: WireUsage; content?: WireBlock[]; stop_reason?: string };
  content_block?: WireBlock;
  delta?: {
    type?: string;
    text?: string;
    thinking?: string;
    signature?: string;
    stop_reason?: string;
  };
  usage?: WireUsage;
  error?: { message?: string };
}

const STOP_REASONS: Record<string, StopReason> = {
  end_turn: 'end',
  stop_sequence: 'end',
  max_tokens: 'max_tokens',
  tool_use: 'tool_use',
  refusal: 'refusal',
};

/** Anthropic Messages (`<baseUrl>/v1/messages`), streamed. */
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
      const blocks: WireBlock[] = [];
      const state = { model: '', stop: undefined as string | undefined };
      const usage: Usage = {
        inputTokens: 0,
        outputTokens: 0,
        cachedInputTokens: 0,
        reasoningTokens: 0,
      };
      const addUsage = (wire: WireUsage | undefined) => {
        if (!wire) return;
        if (wire.input_tokens !== undefined) usage.inputTokens = wire.input_tokens;
        if (wire.output_tokens !== undefined) usage.outputTokens = wire.output_tokens;
        if (wire.cache_read_input_tokens !== undefined) {
          usage.cachedInputTokens = wire.cache_read_input_tokens;
        }
      };
      const absorb = (event: WireEvent) => {
        switch (event.type) {
          case 'message_start':
            state.model = event.message?.model ?? '';
            addUsage(event.message?.usage);
            break;
          case 'content_block_start':
            blocks[event.index ?? blocks.length] = {
              ...event.content_block,
              type: event.content_block?.type ?? 'text',
            };
            break;
          case 'content_block_delta':
            appendDelta(blocks[event.index ?? blocks.length - 1], event.delta);
            break;
          case 'message_delta':
            state.stop = event.delta?.stop_reason ?? state.stop;
            addUsage(event.usage);
            break;
          case 'error':
            throw new ProviderError(
              `${url} reported an error mid-stream: ${event.error?.message}`,
              'protocol',
            );
        }
      };
      await postStream(
        url,
        { headers: headers(), body: toRequestBody(endpoint.model, request) },
        options,
        {
          onEvent: (event: EventSourceMessage) => absorb(parseJson(url, event.data) as WireEvent),
          onJson: (body) => {
            const message = body as NonNullable<WireEvent['message']>;
            state.model = message.model ?? '';
            state.stop = message.stop_reason;
            blocks.push(...(message.content ?? []));
            addUsage(message.usage);
          },
        },
      );
      return {
        content: blocks.flatMap(toBlock),
        stopReason: state.stop ? (STOP_REASONS[state.stop] ?? 'other') : 'other',
        rawStopReason: state.stop,
        usage,
        modelAnswered: state.model || endpoint.model,
        latencyMs: Date.now() - started,
      };
    },
    async listModels(options: CallOptions = {}): Promise<string[]> {
      const body = (await getJson(
        `${endpoint.baseUrl}/v1/models`,
        headers(),
        options.totalTimeoutMs ?? 5_000,
      )) as { data?: Array<{ id?: unknown }> };
      return (body.data ?? []).flatMap((model) => (typeof model.id === 'string' ? [model.id] : []));
    },
  };
}

function appendDelta(block: WireBlock | undefined, delta: WireEvent['delta']): void {
  if (!block || !delta) return;
  if (delta.type === 'text_delta') block.text = (block.text ?? '') + (delta.text ?? '');
  if (delta.type === 'thinking_delta')
    block.thinking = (block.thinking ?? '') + (delta.thinking ?? '');
  if (delta.type === 'signature_delta')
    block.signature = (block.signature ?? '') + (delta.signature ?? '');
}

function toBlock(block: WireBlock | undefined): Block[] {
  if (block?.type === 'text') return [{ type: 'text', text: block.text ?? '' }];
  if (block?.type === 'thinking') {
    return [
      {
        type: 'thinking',
        thinking: block.thinking ?? '',
        ...(block.signature ? { signature: block.signature } : {}),
      },
    ];
  }
  return [];
}

function toRequestBody(model: string, request: GenerateRequest): Record<string, unknown> {
  return {
    model,
    ...(request.system ? { system: request.system } : {}),
    messages: request.messages.map((message) => ({
      role: message.role,
      content: message.content.map((block) =>
        block.type === 'text'
          ? { type: 'text', text: block.text }
          : { type: 'thinking', thinking: block.thinking, signature: block.signature },
      ),
    })),
    max_tokens: request.maxOutputTokens,
    stream: true,
  };
}
