import {
  RAW_SNIPPET_CHARS,
  ProviderError,
  withUsage,
  type Block,
  type GenerateResult,
  type StopReason,
  type Usage,
} from '../../wire/spec.ts';

/** Messages usage: `input_tokens` excludes both cache counts (their sum is the whole input). */
interface WireUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_creation?: {
    ephemeral_5m_input_tokens?: number | null;
    ephemeral_1h_input_tokens?: number | null;
  } | null;
  output_tokens_details?: { thinking_tokens?: number | null } | null;
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
  /** The latest value of each usage field: every event's usage holds running totals. */
  private readonly wireUsage: WireUsage = {};
  private hasUsage = false;

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

  /** What the endpoint reported so far, normalised; undefined before any usage arrived. */
  get reportedUsage(): Usage | undefined {
    return this.hasUsage ? this.usage : undefined;
  }

  private get usage(): Usage {
    const wire = this.wireUsage;
    const written1h = wire.cache_creation?.ephemeral_1h_input_tokens ?? 0;
    const written5m = wire.cache_creation?.ephemeral_5m_input_tokens ?? 0;
    const written = wire.cache_creation_input_tokens ?? written5m + written1h;
    const read = wire.cache_read_input_tokens ?? 0;
    return {
      inputTokens: (wire.input_tokens ?? 0) + written + read,
      outputTokens: wire.output_tokens ?? 0,
      cachedInputTokens: read,
      cacheWriteTokens: written,
      cacheWrite1hTokens: Math.min(written1h, written),
      reasoningTokens: wire.output_tokens_details?.thinking_tokens ?? 0,
    };
  }

  /** Counts are cumulative, and a field left out (or null) keeps its last value. */
  private addUsage(wire: WireUsage | undefined): void {
    if (!wire) return;
    this.hasUsage = true;
    for (const [field, value] of Object.entries(wire)) {
      if (value !== null && value !== undefined)
        (this.wireUsage as Record<string, unknown>)[field] = value;
    }
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
      const error = new ProviderError(
        `${this.url} sent malformed input for tool ${block.name}: ${JSON.stringify(block.partialJson.slice(0, RAW_SNIPPET_CHARS))}`,
        'protocol',
      );
      throw withUsage(error, this.reportedUsage);
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
