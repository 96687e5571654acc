import {
  ProviderError,
  type Block,
  type GenerateResult,
  type StopReason,
  type Usage,
} from '../spec.ts';

interface WireUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
}
interface WireBlock {
  type: string;
  text?: string;
  thinking?: string;
  signature?: string;
  id?: string;
  name?: string;
  input?: unknown;
  /** Accumulated `input_json_delta` pieces of a streamed tool_use. */
  partialJson?: string;
}
/** Why a streaming classifier stopped the answer (`stop_reason: "refusal"`). */
interface WireStopDetails {
  type?: string;
  category?: string | null;
  explanation?: string | null;
}
export interface WireMessage {
  model?: string;
  usage?: WireUsage;
  content?: WireBlock[];
  stop_reason?: string;
  stop_details?: WireStopDetails | null;
}
export interface WireEvent {
  type: string;
  index?: number;
  message?: WireMessage;
  content_block?: WireBlock;
  delta?: {
    type?: string;
    text?: string;
    thinking?: string;
    signature?: string;
    partial_json?: string;
    stop_reason?: string;
    stop_details?: WireStopDetails | null;
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
  // The answer ran into the context window: cut off all the same.
  model_context_window_exceeded: 'max_tokens',
};

/** The blocks this adapter models; any other kind is kept opaque and replayed as received. */
const MODELLED = new Set(['text', 'thinking', 'tool_use']);

/** Folds Messages stream events (or one whole message) into the internal result. */
export class AnthropicStream {
  private readonly blocks: WireBlock[] = [];
  private model = '';
  private stop: string | undefined;
  private stopDetails: WireStopDetails | undefined;
  private stopped = false;
  private readonly usage: Usage = {
    inputTokens: 0,
    outputTokens: 0,
    cachedInputTokens: 0,
    reasoningTokens: 0,
  };

  constructor(private readonly url: string) {}

  get finished(): boolean {
    return this.stopped;
  }

  absorb(event: WireEvent): void {
    switch (event.type) {
      case 'message_start':
        this.model = event.message?.model ?? '';
        this.addUsage(event.message?.usage);
        break;
      case 'content_block_start':
        this.blocks[event.index ?? this.blocks.length] = {
          ...event.content_block,
          type: event.content_block?.type ?? 'text',
        };
        break;
      case 'content_block_delta':
        appendDelta(this.blocks[event.index ?? this.blocks.length - 1], event.delta);
        break;
      case 'message_delta':
        this.stop = event.delta?.stop_reason ?? this.stop;
        this.stopDetails = event.delta?.stop_details ?? this.stopDetails;
        this.addUsage(event.usage);
        break;
      case 'message_stop':
        this.stopped = true;
        break;
      case 'error':
        throw new ProviderError(
          `${this.url} reported an error mid-stream: ${event.error?.message}`,
          'protocol',
        );
    }
  }

  absorbMessage(message: WireMessage): void {
    this.model = message.model ?? '';
    this.stop = message.stop_reason;
    this.stopDetails = message.stop_details ?? undefined;
    this.blocks.push(...(message.content ?? []));
    this.addUsage(message.usage);
    this.stopped = true;
  }

  result(modelAsked: string): Omit<GenerateResult, 'latencyMs' | 'attempts'> {
    const modelAnswered = this.model || modelAsked;
    const refusal = refusalWords(this.stopDetails);
    return {
      content: this.blocks.flatMap((block) => this.toBlock(block, modelAnswered)),
      stopReason: this.stop ? (STOP_REASONS[this.stop] ?? 'other') : 'other',
      rawStopReason: this.stop,
      ...(refusal ? { refusal } : {}),
      usage: this.usage,
      modelAnswered,
    };
  }

  private addUsage(wire: WireUsage | undefined): void {
    if (!wire) return;
    if (wire.input_tokens !== undefined) this.usage.inputTokens = wire.input_tokens;
    if (wire.output_tokens !== undefined) this.usage.outputTokens = wire.output_tokens;
    if (wire.cache_read_input_tokens !== undefined)
      this.usage.cachedInputTokens = wire.cache_read_input_tokens;
  }

  private toBlock(block: WireBlock | undefined, model: string): Block[] {
    if (block && !MODELLED.has(block.type)) return [this.opaque(block)];
    switch (block?.type) {
      case 'text':
        return [{ type: 'text', text: block.text ?? '' }];
      case 'thinking':
        return [
          {
            type: 'thinking',
            thinking: block.thinking ?? '',
            model,
            ...(block.signature ? { signature: block.signature } : {}),
          },
        ];
      case 'tool_use':
        return [
          {
            type: 'tool_use',
            id: block.id ?? '',
            name: block.name ?? '',
            input: this.toolInput(block),
          },
        ];
      default:
        return [];
    }
  }

  /** As it came in `content_block_start`, with any streamed `input` (server tool calls) filled in. */
  private opaque(block: WireBlock): Block {
    const { partialJson, ...received } = block;
    return {
      type: 'opaque',
      format: 'anthropic',
      block: partialJson === undefined ? received : { ...received, input: this.toolInput(block) },
    };
  }

  private toolInput(block: WireBlock): unknown {
    if (block.partialJson === undefined) return block.input ?? {};
    if (block.partialJson.trim() === '') return {};
    try {
      return JSON.parse(block.partialJson);
    } catch {
      throw new ProviderError(
        `${this.url} sent malformed input for tool ${block.name}: ${JSON.stringify(block.partialJson.slice(0, 200))}`,
        'protocol',
      );
    }
  }
}

/** The classifier's explanation, with its category, when it gave them. */
function refusalWords(details: WireStopDetails | undefined): string | undefined {
  const explanation = details?.explanation?.trim();
  const category = details?.category ? `category ${details.category}` : '';
  if (!explanation) return category || undefined;
  return category ? `${explanation} (${category})` : explanation;
}

function appendDelta(block: WireBlock | undefined, delta: WireEvent['delta']): void {
  if (!block || !delta) return;
  if (delta.type === 'text_delta') block.text = (block.text ?? '') + (delta.text ?? '');
  if (delta.type === 'thinking_delta')
    block.thinking = (block.thinking ?? '') + (delta.thinking ?? '');
  if (delta.type === 'signature_delta')
    block.signature = (block.signature ?? '') + (delta.signature ?? '');
  if (delta.type === 'input_json_delta')
    block.partialJson = (block.partialJson ?? '') + (delta.partial_json ?? '');
}
