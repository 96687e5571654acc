import { randomUUID } from 'node:crypto';
import { UserError } from '../../util/user-error.ts';
import { createOpenAiClient } from '../openai/openai-client.ts';
import {
  ProviderError,
  type CallOptions,
  type Endpoint,
  type GenerateRequest,
  type GenerateResult,
  type ModelClient,
} from '../../wire/spec.ts';
import { chatHeaders, COPILOT_API_URL } from '../../config/copilot-endpoints.ts';
import type { CopilotEndpoint } from '../../profiles/copilot/copilot-profile.ts';
import type { CachedToken } from '../../profiles/copilot/copilot-store.ts';
import { copilotApiToken, NotLoggedInError } from '../../profiles/copilot/copilot-token.ts';
import { pollPendingLogin } from '../../profiles/copilot/device-login.ts';

/**
 * GitHub Copilot: OpenAI Chat Completions at `<api>/chat/completions` with a short-lived Copilot
 * API token (exchanged from the stored GitHub login and refreshed before it expires) and the
 * editor headers Copilot requires. The chat API is the profile's baseUrl, or — for the default
 * one — the `endpoints.api` GitHub names for the account (individual, business, enterprise).
 */
export function createCopilotClient(endpoint: Endpoint): ModelClient {
  const { copilot } = endpoint as Partial<CopilotEndpoint>;
  if (!copilot) throw new Error('a copilot endpoint must come from endpointFor (its login place)');
  const chatClient = async (forceRefresh: boolean) => {
    const token = await tokenOrPendingLogin(copilot, forceRefresh);
    return createOpenAiClient({
      ...endpoint,
      baseUrl: chatBaseUrl(endpoint.baseUrl, token),
      apiKey: token.token,
      headers: { ...chatHeaders(randomUUID()), ...endpoint.headers },
    });
  };
  /** A 401 from the chat API means the cached token died early: one retry with a fresh one. */
  const withToken = async <T>(run: (client: ModelClient) => Promise<T>): Promise<T> => {
    try {
      return await run(await chatClient(false));
    } catch (error) {
      if (!(error instanceof ProviderError && error.status === 401)) throw error;
      return run(await chatClient(true));
    }
  };
  return {
    format: 'copilot',
    generate: (request: GenerateRequest, options: CallOptions = {}): Promise<GenerateResult> =>
      withToken((client) => client.generate(request, options)),
    listModels: (options: CallOptions = {}) =>
      withToken(async (client) => (await client.listModels?.(options)) ?? []),
  };
}

/** Without a login, a pending device flow is polled once (the user may just have approved it). */
async function tokenOrPendingLogin(
  place: CopilotEndpoint['copilot'],
  forceRefresh: boolean,
): Promise<CachedToken> {
  try {
    return await copilotApiToken(place, place.profile, forceRefresh);
  } catch (error) {
    if (!(error instanceof NotLoggedInError)) throw error;
    const step = await pollPendingLogin(place);
    if (step?.kind === 'authorised') return copilotApiToken(place, place.profile, forceRefresh);
    if (step?.kind !== 'waiting') throw error;
    throw new UserError(
      `Profile "${place.profile}" (copilot) waits for the user to approve its GitHub login: open ` +
        `${step.pending.verificationUri} and enter the code ${step.pending.userCode}. Then call again.`,
    );
  }
}

function chatBaseUrl(baseUrl: string, token: CachedToken): string {
  return baseUrl === COPILOT_API_URL && token.api ? token.api : baseUrl;
}
