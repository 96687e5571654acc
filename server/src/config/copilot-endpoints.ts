/**
 * Where GitHub Copilot lives and how its clients introduce themselves. Copilot's chat API is not
 * publicly documented; these values follow the open-source clients that call it:
 * ericc-ch/copilot-api (`src/lib/api-config.ts`, `src/services/github/*`), LiteLLM
 * (`litellm/llms/github_copilot/authenticator.py`, `common_utils.py`) and copilot.vim, which all
 * log in with the VS Code Copilot OAuth app's public client id through GitHub's device flow
 * (docs.github.com: "Authorizing OAuth apps", device flow), exchange the GitHub token at
 * `api.github.com/copilot_internal/v2/token`, and send the editor headers below.
 * Imported by the config schema (the server's start-up path): keep it free of runtime imports.
 */
import type { Environment } from './paths.ts';

/** The chat API of a `copilot` profile without a baseUrl (`<url>/chat/completions`). */
export const COPILOT_API_URL = 'https://api.githubcopilot.com';

/** The public client id of GitHub's VS Code Copilot app (not a secret: device flow needs none). */
export const COPILOT_CLIENT_ID = 'Iv1.b507a08c87ecfe98';
export const COPILOT_SCOPE = 'read:user';
export const DEVICE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';

const COPILOT_CHAT_VERSION = '0.26.7';

/** github.com (device flow) and api.github.com (token exchange). */
export interface GitHubUrls {
  web: string;
  api: string;
}

/**
 * GitHub's addresses. `DELEGATE_GITHUB_URL_FOR_TEST` and `DELEGATE_GITHUB_API_URL_FOR_TEST`
 * point them at fake servers in tests; the endpoint safety check applies to them as to any URL.
 */
export function githubUrls(env: Environment): GitHubUrls {
  const trimmed = (value: string | undefined, fallback: string) =>
    (value?.trim() || fallback).replace(/\/+$/, '');
  return {
    web: trimmed(env.DELEGATE_GITHUB_URL_FOR_TEST, 'https://github.com'),
    api: trimmed(env.DELEGATE_GITHUB_API_URL_FOR_TEST, 'https://api.github.com'),
  };
}

/** The editor identity the token endpoint and the chat API expect (copilot-api, LiteLLM). */
export function editorHeaders(): Record<string, string> {
  return {
    'editor-version': 'vscode/1.95.0',
    'editor-plugin-version': `copilot-chat/${COPILOT_CHAT_VERSION}`,
    'user-agent': `GitHubCopilotChat/${COPILOT_CHAT_VERSION}`,
    'x-github-api-version': '2025-04-01',
  };
}

/**
 * Headers of a chat call besides the bearer token: Copilot refuses calls without an integration
 * id; `openai-intent` and the request id are what VS Code sends (copilot-api's `copilotHeaders`,
 * LiteLLM's `get_copilot_default_headers`).
 */
export function chatHeaders(requestId: string): Record<string, string> {
  return {
    ...editorHeaders(),
    'copilot-integration-id': 'vscode-chat',
    'openai-intent': 'conversation-panel',
    'x-request-id': requestId,
    'x-vscode-user-agent-library-version': 'electron-fetch',
  };
}
