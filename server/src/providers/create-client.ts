import type { ProfileFormat } from '../config/config-rules.ts';
import { createAnthropicClient } from './anthropic/anthropic-client.ts';
import { createCopilotClient } from './copilot/copilot-client.ts';
import { createOpenAiClient } from './openai/openai-client.ts';
import { DEFAULT_RETRY_POLICY, withRetries } from './retry.ts';
import { secretRedactor, type SecretRedactor } from '../util/secret-redactor.ts';
import { UserError } from '../util/user-error.ts';
import {
  ERROR_MESSAGE_CHARS,
  type CallOptions,
  type Endpoint,
  type GenerateRequest,
  type GenerateResult,
  type ModelClient,
} from '../wire/spec.ts';

const FACTORIES: Record<ProfileFormat, (endpoint: Endpoint) => ModelClient> = {
  openai: createOpenAiClient,
  anthropic: createAnthropicClient,
  copilot: createCopilotClient,
  'claude-cli': cliEngineOnly,
  'codex-cli': cliEngineOnly,
  'gemini-cli': cliEngineOnly,
};

/** A CLI-engine profile has no wire client: it runs tasks only, through its CLI. */
function cliEngineOnly(): ModelClient {
  throw new UserError(
    'This profile is a CLI engine (claude-cli, codex-cli, gemini-cli): it runs tasks only. Use task_start with it, or another profile for delegate.',
  );
}

/**
 * The adapter for a profile's wire format, with retries around every call. Gateways are
 * asked not to retry on their own (LiteLLM's `x-litellm-num-retries`), so retries never
 * multiply; a profile's own headers win.
 *
 * Everything the endpoint sends back — answer text, thinking, tool-call arguments, model names,
 * routing headers, the models list and error texts — leaves here with every key in `secrets`
 * (and the endpoint's own) cut out in all its encodings, so no caller ever holds an echoed key.
 * `secrets` is read after the call: a Copilot API token may have been renewed during it.
 * Services pass every key the machine holds (`knownSecrets`); without it, only the endpoint's.
 */
export function createClient(
  format: ProfileFormat,
  endpoint: Endpoint,
  secrets: () => Iterable<string> = () => [],
): ModelClient {
  const adapter = FACTORIES[format]({
    ...endpoint,
    headers: { 'x-litellm-num-retries': '0', ...endpoint.headers },
  });
  const redactor = () => secretRedactor([...secrets(), ...endpointSecrets(endpoint)]);
  const listModels = adapter.listModels?.bind(adapter);
  return {
    format: adapter.format,
    ...(adapter.requestBytes ? { requestBytes: adapter.requestBytes.bind(adapter) } : {}),
    async generate(request: GenerateRequest, options: CallOptions = {}): Promise<GenerateResult> {
      const policy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
      try {
        const { value, attempts } = await withRetries(
          () => adapter.generate(request, options),
          policy,
          options.signal,
          options.onFailedAttempt &&
            ((failure) =>
              options.onFailedAttempt!({
                ...failure,
                error: redactedError(failure.error, redactor()) as typeof failure.error,
              })),
        );
        return redactor().value({ ...value, attempts });
      } catch (error) {
        throw redactedError(error, redactor());
      }
    },
    ...(listModels
      ? {
          async listModels(options?: CallOptions): Promise<string[]> {
            try {
              return redactor().value(await listModels(options));
            } catch (error) {
              throw redactedError(error, redactor());
            }
          },
        }
      : {}),
  };
}

/** The key and credential headers this endpoint is called with. */
function endpointSecrets(endpoint: Endpoint): string[] {
  const headers = Object.entries(endpoint.headers ?? {})
    .filter(([name]) => /auth|key|token|secret|cookie|-vk$/i.test(name))
    .map(([, value]) => value.replace(/^(bearer|basic)\s+/i, ''));
  return endpoint.apiKey ? [endpoint.apiKey, ...headers] : headers;
}

/** The error with every key cut out of its text, then cut to length (never the other way round). */
function redactedError(error: unknown, redactor: SecretRedactor): unknown {
  if (error instanceof Error) {
    const message = redactor.text(error.message);
    error.message =
      message.length > ERROR_MESSAGE_CHARS ? `${message.slice(0, ERROR_MESSAGE_CHARS)}…` : message;
    // The stack was written with the message it had when the error was made.
    if (error.stack) error.stack = redactor.text(error.stack);
  }
  return error;
}
