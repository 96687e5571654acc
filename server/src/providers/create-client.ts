import type { ProfileFormat } from '../config/schema.ts';
import { createAnthropicClient } from './anthropic/anthropic-client.ts';
import { createCopilotClient } from './copilot/copilot-client.ts';
import { createOpenAiClient } from './openai/openai-client.ts';
import { DEFAULT_RETRY_POLICY, withRetries } from './retry.ts';
import { UserError } from '../util/user-error.ts';
import type {
  CallOptions,
  Endpoint,
  GenerateRequest,
  GenerateResult,
  ModelClient,
} from './spec.ts';

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
 */
export function createClient(format: ProfileFormat, endpoint: Endpoint): ModelClient {
  const adapter = FACTORIES[format]({
    ...endpoint,
    headers: { 'x-litellm-num-retries': '0', ...endpoint.headers },
  });
  return {
    ...adapter,
    async generate(request: GenerateRequest, options: CallOptions = {}): Promise<GenerateResult> {
      const policy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
      const { value, attempts } = await withRetries(
        () => adapter.generate(request, options),
        policy,
        options.signal,
        options.onFailedAttempt,
      );
      return { ...value, attempts };
    },
  };
}
