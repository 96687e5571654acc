/**
 * The provider spec: the one contract between the engines and the wire-format adapters.
 * Adapters import only this file and shared leaves; engines import only this file and
 * `create-client.ts`. Optional capabilities are signalled by the presence of a method.
 */
import { UserError } from '../util/user-error.ts';

export type Block =
  | { type: 'text'; text: string }
  /** Reasoning, kept with its signature so it can be replayed intact where a model needs it. */
  | { type: 'thinking'; thinking: string; signature?: string };

export interface Message {
  role: 'user' | 'assistant';
  content: Block[];
}

export interface GenerateRequest {
  system?: string;
  messages: Message[];
  maxOutputTokens: number;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  reasoningTokens: number;
}

/** Normalised reason the model stopped; `raw` keeps the endpoint's own word. */
export type StopReason = 'end' | 'max_tokens' | 'tool_use' | 'refusal' | 'other';

export interface GenerateResult {
  content: Block[];
  stopReason: StopReason;
  rawStopReason: string | undefined;
  usage: Usage;
  /** The model that actually answered (response `model`), which may differ from the one asked for. */
  modelAnswered: string;
  latencyMs: number;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** Abort when no byte arrives for this long. */
  idleTimeoutMs?: number;
  /** Abort when the whole call takes longer than this. */
  totalTimeoutMs?: number;
}

/** Where and how to reach one model. Keys arrive here resolved; they never travel further. */
export interface Endpoint {
  baseUrl: string;
  model: string;
  apiKey?: string;
  headers?: Readonly<Record<string, string>>;
}

export interface ModelClient {
  readonly format: string;
  generate(request: GenerateRequest, options?: CallOptions): Promise<GenerateResult>;
  /** Models the endpoint serves, where it can list them. */
  listModels?(options?: CallOptions): Promise<string[]>;
}

export type ProviderErrorKind = 'http' | 'unreachable' | 'timeout' | 'protocol' | 'aborted';

/** A failed call, with the endpoint's own words where it gave any. */
export class ProviderError extends UserError {
  constructor(
    message: string,
    readonly kind: ProviderErrorKind,
    readonly status?: number,
  ) {
    super(message);
  }
}

export function textOf(content: readonly Block[]): string {
  return content.map((block) => (block.type === 'text' ? block.text : '')).join('');
}
