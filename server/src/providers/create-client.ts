import type { ProfileFormat } from '../config/schema.ts';
import { createAnthropicClient } from './anthropic/anthropic-client.ts';
import { createOpenAiClient } from './openai/openai-client.ts';
import type { Endpoint, ModelClient } from './spec.ts';

const FACTORIES: Record<ProfileFormat, (endpoint: Endpoint) => ModelClient> = {
  openai: createOpenAiClient,
  anthropic: createAnthropicClient,
};

/** The adapter for a profile's wire format. */
export function createClient(format: ProfileFormat, endpoint: Endpoint): ModelClient {
  return FACTORIES[format](endpoint);
}
