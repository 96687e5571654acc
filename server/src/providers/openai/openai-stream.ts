import {
  RAW_SNIPPET_CHARS,
  ProviderError,
  withUsage,
  type Block,
  type GenerateResult,
  type StopReason,
  type Usage,
} from '../../wire/spec.ts';

interface ToolCallDelta {
  index?: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}
interface ChatDelta {
  content?: string | null;
  reasoning_content?: string | null;
  reasoning?: string | null;
  /** The model's refusal, streamed in pieces like `content`. */
  refusal?: string | null;
  tool_calls?: ToolCallDelta[];
}
export interface ChatChunk {
  model?: string;
  choices?: Array<{ delta?: ChatDelta; message?: ChatDelta; finish_reason?: string | null }>;
  /** `prompt_tokens` includes the cached and cache-written tokens detailed below. */
  usage?: {
    prompt_tokens?: number;
    completion_tokens?: number;
    prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number } | null;
    completion_tokens_details?: { reasoning_tokens?: number } | null;
    /** DeepSeek's names for cache hits (part of prompt_tokens). */
    prompt_cache_hit_tokens?: number;
  } | null;
  error?: { message?: string };
}

const STOP_REASONS: Record<string, StopReason> = {
  stop: 'end',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  content_filter: 'content_filter',
};

/** Folds Chat Completions chunks (or one whole response) into the internal result. */
export class OpenAiStream {
  private text = '';
  private reasoning = '';
  private refusal = '';
  private model = '';
  private finish: string | undefined;
  private usage: Usage = {
    inputTokens: 0,
    outputTokens: 0,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    cacheWrite1hTokens: 0,
    reasoningTokens: 0,
  };
  private hasUsage = false;
  private readonly calls: Array<{ id: string; name: string; arguments: string }> = [];
  private readonly callsByIndex = new Map<number, number>();

  constructor(private readonly url: string) {}

  get finished(): boolean {
    return this.finish !== undefined;
  }

  absorb(chunk: ChatChunk): void {
    if (chunk.error)
      throw new ProviderError(
        `${this.url} reported an error mid-stream: ${chunk.error.message}`,
        'protocol',
      );
    if (chunk.model) this.model = chunk.model;
    const choice = chunk.choices?.[0];
    const delta = choice?.delta ?? choice?.message;
    this.text += delta?.content ?? '';
    this.reasoning += delta?.reasoning_content ?? delta?.reasoning ?? '';
    this.refusal += delta?.refusal ?? '';
    for (const call of delta?.tool_calls ?? []) this.absorbToolCall(call);
    if (choice?.finish_reason) this.finish = choice.finish_reason;
    if (chunk.usage) {
      this.usage = toUsage(chunk.usage);
      this.hasUsage = true;
    }
  }

  /** What the endpoint reported so far; undefined before its usage chunk arrived. */
  get reportedUsage(): Usage | undefined {
    return this.hasUsage ? this.usage : undefined;
  }

  result(modelAsked: string): Omit<GenerateResult, 'latencyMs' | 'attempts'> {
    const modelAnswered = this.model || modelAsked;
    const content: Block[] = [];
    if (this.reasoning)
      content.push({ type: 'thinking', thinking: this.reasoning, model: modelAnswered });
    if (this.text) content.push({ type: 'text', text: this.text });
    for (const call of this.calls)
      content.push({
        type: 'tool_use',
        id: call.id,
        name: call.name,
        input: this.parseArguments(call),
      });
    return {
      content,
      stopReason: this.stopReason(),
      rawStopReason: this.finish,
      ...(this.refusal ? { refusal: this.refusal } : {}),
      usage: this.usage,
      modelAnswered,
    };
  }

  /** A refusal comes with finish_reason "stop"; local servers often say "stop" after a tool call. */
  private stopReason(): StopReason {
    if (this.calls.length) return 'tool_use';
    if (this.refusal && (this.finish ?? 'stop') === 'stop') return 'refusal';
    return this.finish ? (STOP_REASONS[this.finish] ?? 'other') : 'other';
  }

  /** Tool calls arrive by `index`; some servers (Ollama) send whole calls without one. */
  private absorbToolCall(delta: ToolCallDelta): void {
    let position = delta.index !== undefined ? this.callsByIndex.get(delta.index) : undefined;
    const startsNew =
      position === undefined &&
      (delta.index !== undefined ||
        delta.id !== undefined ||
        !!delta.function?.name ||
        this.calls.length === 0);
    if (startsNew) {
      position =
        this.calls.push({
          id: delta.id ?? `call_${this.calls.length + 1}`,
          name: '',
          arguments: '',
        }) - 1;
      if (delta.index !== undefined) this.callsByIndex.set(delta.index, position);
    }
    const call = this.calls[position ?? this.calls.length - 1];
    if (!call) return;
    if (delta.id) call.id = delta.id;
    call.name += delta.function?.name ?? '';
    call.arguments += delta.function?.arguments ?? '';
  }

  private parseArguments(call: { name: string; arguments: string }): unknown {
    if (call.arguments.trim() === '') return {};
    try {
      return JSON.parse(call.arguments);
    } catch {
      const error = new ProviderError(
        `${this.url} sent malformed arguments for tool ${call.name}: ${JSON.stringify(call.arguments.slice(0, RAW_SNIPPET_CHARS))}`,
        'protocol',
      );
      throw withUsage(error, this.reportedUsage);
    }
  }
}

function toUsage(usage: NonNullable<ChatChunk['usage']>): Usage {
  const details = usage.prompt_tokens_details;
  return {
    inputTokens: usage.prompt_tokens ?? 0,
    outputTokens: usage.completion_tokens ?? 0,
    cachedInputTokens: details?.cached_tokens ?? usage.prompt_cache_hit_tokens ?? 0,
    cacheWriteTokens: details?.cache_write_tokens ?? 0,
    cacheWrite1hTokens: 0,
    reasoningTokens: usage.completion_tokens_details?.reasoning_tokens ?? 0,
  };
}
