/**
 * The provider spec: the one contract between the callers of a model (`calls/`) and the
 * wire-format adapters (`providers/`). Callers reach an adapter only through
 * `providers/create-client.ts`. Optional capabilities are signalled by the presence of a method.
 */
import { UserError } from '../util/user-error.ts';

export type Block =
  | { type: 'text'; text: string }
  /** Reasoning, kept with its signature so it can be replayed intact where a model needs it. */
  /** `model`: who produced it, so it is replayed only to that model (and only where needed). */
  | { type: 'thinking'; thinking: string; signature?: string; model?: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'tool_result'; toolUseId: string; content: string; isError?: boolean }
  /**
   * A block of a kind we do not model (Anthropic `redacted_thinking`, server tool blocks…),
   * kept as received and sent back unchanged to the same wire format, never to another.
   */
  | { type: 'opaque'; format: string; block: Readonly<Record<string, unknown>> };

/** A tool the model may call; `inputSchema` is a JSON Schema object. */
export interface ToolSpec {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export interface Message {
  role: 'user' | 'assistant';
  content: Block[];
}

export interface GenerateRequest {
  system?: string;
  messages: Message[];
  tools?: ToolSpec[];
  maxOutputTokens: number;
}

/**
 * Tokens of one attempt, in one convention for every wire format:
 *
 * - `inputTokens`: every input token the endpoint processed, cached ones included, so
 *   `inputTokens - cachedInputTokens - cacheWriteTokens` were neither read from nor written to
 *   the prompt cache. (Anthropic's `input_tokens` leaves the cached parts out and its adapter
 *   adds them back; OpenAI's `prompt_tokens` already holds them.)
 * - `cachedInputTokens`: the part of `inputTokens` read from the prompt cache (cache hits).
 * - `cacheWriteTokens`: the part of `inputTokens` written to the prompt cache, which some
 *   endpoints bill above the input price; `cacheWrite1hTokens` is the part of those written to
 *   Anthropic's one-hour cache (billed higher still), 0 when not reported.
 * - `outputTokens`: every output token, `reasoningTokens` included.
 */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  cacheWriteTokens: number;
  cacheWrite1hTokens: number;
  reasoningTokens: number;
}

/** Normalised reason the model stopped; `raw` keeps the endpoint's own word. */
export type StopReason = 'end' | 'max_tokens' | 'tool_use' | 'refusal' | 'content_filter' | 'other';

export interface GenerateResult {
  content: Block[];
  stopReason: StopReason;
  rawStopReason: string | undefined;
  /**
   * The model's own words when it refused (OpenAI `refusal`, Anthropic `stop_details`); kept
   * apart from the answer text, which may hold what came before the refusal.
   */
  refusal?: string;
  usage: Usage;
  /** The model that actually answered (response `model`), which may differ from the one asked for. */
  modelAnswered: string;
  /** Gateway routing facts from response headers (e.g. the deployment a gateway chose). */
  routedVia?: string;
  latencyMs: number;
  /** HTTP attempts this result took (1 = no retry). */
  attempts: number;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** Abort an attempt when no byte arrives for this long. */
  idleTimeoutMs?: number;
  /** Abort an attempt that takes longer than this in total. */
  totalTimeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /**
   * Called after each failed attempt, before any retry; `error.usage` is what the endpoint
   * reported for the attempt, if anything (it may bill it). Throwing stops the retries and
   * fails the call with what was thrown.
   */
  onFailedAttempt?: (failure: {
    error: ProviderError;
    attempt: number;
    willRetry: boolean;
  }) => Promise<void>;
}

/** Retries of 429/5xx/529, connection errors, stalls and broken streams. */
export interface RetryPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Time budget for all waiting between attempts. */
  maxWaitMs: number;
}

/** Where and how to reach one model. Keys arrive here resolved; they never travel further. */
export interface Endpoint {
  baseUrl: string;
  model: string;
  apiKey?: string;
  headers?: Readonly<Record<string, string>>;
  /** Add `cache_control` breakpoints (system, tools, latest turn). */
  promptCache?: boolean;
  /**
   * Send earlier reasoning back with the conversation: `auto` does so only for models known
   * to require it (DeepSeek, Kimi, MiniMax thinking models), `never` for endpoints that reject it.
   */
  replayReasoning?: 'auto' | 'always' | 'never';
  /**
   * What the adapter learned about this model while the process runs, shared by every client
   * of the same profile and model (the adapter writes to it).
   */
  learned?: LearnedFacts;
}

/** Facts about a model learned from its answers, remembered for the process. */
export interface LearnedFacts {
  /** It refused `max_tokens` and takes `max_completion_tokens` (OpenAI reasoning models). */
  takesMaxCompletionTokens?: boolean;
}

export interface ModelClient {
  readonly format: string;
  generate(request: GenerateRequest, options?: CallOptions): Promise<GenerateResult>;
  /** Models the endpoint serves, where it can list them. */
  listModels?(options?: CallOptions): Promise<string[]>;
  /** Bytes of the request body this client would send for `request` (budgets bound tokens by it). */
  requestBytes?(request: GenerateRequest): number;
}

/**
 * How much of a malformed reply an error quotes. It is long on purpose: the client cuts every
 * error message to {@link ERROR_MESSAGE_CHARS} only after redacting keys from it, so a key is
 * never cut in half before the redaction could recognise it.
 */
export const RAW_SNIPPET_CHARS = 2_000;
/** The longest error message a client passes on (cut after redaction, see above). */
export const ERROR_MESSAGE_CHARS = 1_000;

/** `stalled`: no byte within the idle timeout; `timeout`: the attempt's total time ran out; `refused`: nothing listens. */
export type ProviderErrorKind =
  'http' | 'refused' | 'unreachable' | 'stalled' | 'timeout' | 'protocol' | 'aborted';

/** A failed call, with the endpoint's own words where it gave any. */
export class ProviderError extends UserError {
  constructor(
    message: string,
    readonly kind: ProviderErrorKind,
    readonly status?: number,
    /** How long the endpoint asked us to wait before trying again (Retry-After, retry-after-ms). */
    readonly retryAfterMs?: number,
    /** Attempts made before giving up. */
    public attempts = 1,
  ) {
    super(message);
  }

  /** Usage the endpoint reported for the failed attempt before it broke off (billed all the same). */
  usage?: Usage;
}

/** A worker's failure (a ProviderError) told to the supervisor with the profile it ran on. */
export class WorkerFailedError extends UserError {}

/** Attaches the usage an attempt reported to the error that ended it (unless it has one). */
export function withUsage(error: unknown, usage: Usage | undefined): unknown {
  if (error instanceof ProviderError && usage && !error.usage) error.usage = usage;
  return error;
}

export function textOf(content: readonly Block[]): string {
  return content.map((block) => (block.type === 'text' ? block.text : '')).join('');
}
