import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { RefusedEndpointError } from './endpoint-safety.ts';
import {
  connectionCode,
  sendRequest,
  type HttpResponse,
  type ResponseHeaders,
} from './http-request.ts';
import {
  ProviderError,
  RAW_SNIPPET_CHARS,
  withUsage,
  type CallOptions,
  type Usage,
} from './spec.ts';

export const DEFAULT_IDLE_TIMEOUT_MS = 300_000;
const DEFAULT_TOTAL_TIMEOUT_MS = 900_000;

export interface StreamHandlers {
  onEvent(event: EventSourceMessage): void;
  /** An endpoint that ignored `stream: true` and answered with one JSON body. */
  onJson(body: unknown): void;
  /** Usage the reply reported so far, kept on the error when the attempt fails after it. */
  usage?(): Usage | undefined;
}

/** A wait in seconds when it is whole seconds, else in milliseconds (tests use short limits). */
function formatWait(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/**
 * POSTs JSON and feeds the SSE reply to `handlers`, with idle and total timeouts that really
 * abort the stream. The timers are our own (Node 18/20 lose `AbortSignal.timeout` inside
 * `AbortSignal.any` after garbage collection). Non-2xx replies become a `ProviderError`
 * carrying the endpoint's own message and any Retry-After it sent.
 */
export async function postStream(
  url: string,
  init: { headers: Record<string, string>; body: unknown },
  options: CallOptions,
  handlers: StreamHandlers,
): Promise<ResponseHeaders> {
  const controller = new AbortController();
  const idleMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const totalMs = options.totalTimeoutMs ?? DEFAULT_TOTAL_TIMEOUT_MS;
  let timedOut: ProviderError | undefined;
  // The error is made when a timer fires, not each time one is set (once per chunk received).
  const abortWith = (error: () => ProviderError) => () => {
    timedOut = error();
    controller.abort();
  };
  const stalled = () =>
    new ProviderError(
      `${url} sent nothing for ${formatWait(idleMs)} (the profile's idle limit, "idleTimeoutS"); the call was aborted. ` +
        'Raise "idleTimeoutS" in the profile if the model needs longer before its first word, or check the server.',
      'stalled',
    );
  const totalTimer = setTimeout(
    abortWith(
      () =>
        new ProviderError(
          `${url} took longer than ${formatWait(totalMs)}, the limit of one call; the call was aborted. ` +
            'Ask for a shorter answer (max_output_tokens) or split the work; delegate doctor checks the endpoint.',
          'timeout',
        ),
    ),
    totalMs,
  );
  const idleTimer = setTimeout(abortWith(stalled), idleMs);
  const onOuterAbort = () => controller.abort();
  options.signal?.addEventListener('abort', onOuterAbort, { once: true });
  let isStreaming = false;
  try {
    const response = await sendRequest(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...init.headers },
      body: JSON.stringify(init.body),
      signal: controller.signal,
    });
    if (!isOk(response)) throw await httpError(url, response, init.headers);
    isStreaming = true;
    const isJson = (response.headers.get('content-type') ?? '').includes('application/json');
    const parser = createParser({ onEvent: (event) => handlers.onEvent(event) });
    const decoder = new TextDecoder();
    let jsonText = '';
    for await (const chunk of response.body) {
      idleTimer.refresh();
      const text = decoder.decode(chunk, { stream: true });
      if (isJson) jsonText += text;
      else parser.feed(text);
    }
    if (isJson) handlers.onJson(parseJson(url, jsonText + decoder.decode()));
    return response.headers;
  } catch (error) {
    throw withUsage(
      streamError(url, error, { init, timedOut, isStreaming, options }),
      handlers.usage?.(),
    );
  } finally {
    clearTimeout(totalTimer);
    clearTimeout(idleTimer);
    options.signal?.removeEventListener('abort', onOuterAbort);
  }
}

function streamError(
  url: string,
  error: unknown,
  at: {
    init: { headers: Record<string, string> };
    timedOut: ProviderError | undefined;
    isStreaming: boolean;
    options: CallOptions;
  },
): unknown {
  if (error instanceof ProviderError) return redacted(error, at.init.headers);
  if (error instanceof RefusedEndpointError) return error;
  if (at.timedOut) return at.timedOut;
  if (at.options.signal?.aborted)
    return new ProviderError(`Call to ${url} was cancelled.`, 'aborted');
  if (at.isStreaming) {
    return new ProviderError(
      `The reply from ${url} broke off: ${(error as Error).message}`,
      'protocol',
    );
  }
  return connectionError(url, error);
}

/**
 * GETs JSON with a timeout (POSTs `body` as JSON when given); used for model listings,
 * reachability checks and discovery.
 */
export async function getJson(
  url: string,
  headers: Record<string, string>,
  timeoutMs: number,
  body?: unknown,
): Promise<unknown> {
  const controller = new AbortController();
  // Our own timer: Node 18/20 can lose AbortSignal.timeout to garbage collection.
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const response = await sendRequest(
      url,
      body === undefined
        ? { method: 'GET', headers, signal: controller.signal }
        : {
            method: 'POST',
            headers: { ...headers, 'content-type': 'application/json' },
            body: JSON.stringify(body),
            signal: controller.signal,
          },
    );
    if (!isOk(response)) throw await httpError(url, response, headers);
    return parseJson(url, await response.text());
  } catch (error) {
    if (error instanceof ProviderError) throw redacted(error, headers);
    if (error instanceof RefusedEndpointError) throw error;
    if (controller.signal.aborted) {
      throw new ProviderError(`${url} did not answer within ${timeoutMs} ms.`, 'timeout');
    }
    throw connectionError(url, error);
  } finally {
    clearTimeout(timer);
  }
}

const isOk = (response: HttpResponse) => response.status >= 200 && response.status < 300;

export function parseJson(url: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ProviderError(
      `${url} answered with malformed JSON: ${JSON.stringify(text.slice(0, RAW_SNIPPET_CHARS))}`,
      'protocol',
    );
  }
}

/** Routing facts a gateway reports in response headers (LiteLLM, Bifrost, OpenRouter, Portkey). */
export function routingFacts(headers: ResponseHeaders): string | undefined {
  const facts: string[] = [];
  headers.forEach((value, name) => {
    if (
      /^x-(litellm|bifrost|openrouter|portkey)-.*(model|provider|deployment|route|api-base)/i.test(
        name,
      )
    ) {
      facts.push(`${name}: ${value}`);
    }
  });
  return facts.length ? facts.sort().join('; ') : undefined;
}

async function httpError(
  url: string,
  response: HttpResponse,
  sent: Record<string, string>,
): Promise<ProviderError> {
  // Before cutting to length, so no part of a key survives the cut.
  const body = redactSecrets(await response.text().catch(() => ''), sent);
  let detail = body.trim().slice(0, 500);
  try {
    const json = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown };
    const message =
      typeof json.error === 'string' ? json.error : (json.error?.message ?? json.message);
    if (typeof message === 'string' && message) detail = message;
  } catch {
    // Not JSON: keep the raw text.
  }
  const hint = HTTP_HINTS[response.status] ?? '';
  return new ProviderError(
    `${url} answered HTTP ${response.status}${detail ? `: ${detail}` : ''}${hint ? ` — ${hint}` : ''}`,
    'http',
    response.status,
    retryAfterMs(response.headers),
  );
}

/** `retry-after-ms` (milliseconds), else `Retry-After` (seconds or an HTTP date). */
export function retryAfterMs(headers: ResponseHeaders, now = Date.now()): number | undefined {
  const milliseconds = Number(headers.get('retry-after-ms'));
  if (headers.has('retry-after-ms') && Number.isFinite(milliseconds) && milliseconds >= 0)
    return milliseconds;
  const value = headers.get('retry-after');
  if (value === null) return undefined;
  const seconds = Number(value);
  if (value.trim() !== '' && Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * An endpoint may echo what it was sent ("invalid key sk-…"); error text reaches results, the
 * ledger and logs, so every header value we sent that could be a credential is cut out of it.
 */
function redacted(error: ProviderError, sent: Record<string, string>): ProviderError {
  error.message = redactSecrets(error.message, sent);
  return error;
}

function redactSecrets(text: string, sent: Record<string, string>): string {
  let clean = text;
  for (const [name, value] of Object.entries(sent)) {
    if (!/auth|key|token|secret|cookie|-vk$/i.test(name)) continue;
    for (const secret of [value, value.replace(/^(bearer|basic)\s+/i, '')]) {
      if (secret.length >= 8) clean = clean.split(secret).join('[redacted]');
    }
  }
  return clean;
}

const HTTP_HINTS: Record<number, string> = {
  401: 'the key was refused; check the variable named by apiKeyEnv, or store it again with provider_key.',
  403: 'the key may not use this model or endpoint.',
  404: 'check baseUrl (openai: include /v1; anthropic: the host root) and the model name.',
};

function connectionError(url: string, error: unknown): ProviderError {
  const code = connectionCode(error);
  return new ProviderError(
    `Cannot reach ${url} (${code}). Is the server running and is baseUrl right?`,
    code === 'ECONNREFUSED' ? 'refused' : 'unreachable',
  );
}
