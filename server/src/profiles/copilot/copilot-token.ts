import { UserError } from '../../util/user-error.ts';
import { ProviderError } from '../../wire/spec.ts';
import { editorHeaders, type GitHubUrls } from '../../config/copilot-endpoints.ts';
import { notLoggedInText } from './copilot-profile.ts';
import {
  loginId,
  readCopilotState,
  updateCopilotState,
  usableLogin,
  type CachedToken,
  type CopilotPlace,
} from './copilot-store.ts';
import { githubJson, githubMessage } from './github-http.ts';

/** A GitHub login that GitHub no longer accepts (revoked, expired): only a new login helps. */
export class LoginRefusedError extends UserError {}
/** No login for this Copilot API (a device flow may be pending). */
export class NotLoggedInError extends UserError {}

const MINUTE_MS = 60_000;

/**
 * The Copilot API token of `place`'s login: the cached one until its refresh time, else a new
 * one from GitHub's token endpoint, cached 0600 for every process. `forceRefresh` after the chat
 * API refused the cached one. Errors say what to do, naming `profile`.
 */
export async function copilotApiToken(
  place: CopilotPlace,
  profile: string,
  forceRefresh = false,
): Promise<CachedToken> {
  const state = readCopilotState(place.dataHome);
  const login = usableLogin(state, place);
  if (!login) throw new NotLoggedInError(notLoggedInText(profile, place.apiOrigin));
  const id = loginId(login.githubToken);
  const cached = state.tokens[place.apiOrigin];
  if (!forceRefresh && cached?.loginId === id && Date.now() < cached.refreshAt) return cached;
  const fresh = {
    ...(await exchangeToken(place.github, login.githubToken, profile)),
    loginId: id,
  };
  await updateCopilotState(place.dataHome, (latest) => {
    // A login replaced meanwhile keeps its own token.
    if (latest.logins[place.apiOrigin]?.githubToken === login.githubToken) {
      latest.tokens[place.apiOrigin] = fresh;
    }
  });
  return fresh;
}

/**
 * GET `copilot_internal/v2/token` with `Authorization: token <GitHub token>` (as copilot-api's
 * `getCopilotToken` and LiteLLM's `_refresh_api_key` do) → `{token, expires_at, refresh_in,
 * endpoints.api}`.
 */
async function exchangeToken(
  github: GitHubUrls,
  githubToken: string,
  profile: string,
): Promise<Omit<CachedToken, 'loginId'>> {
  const url = `${github.api}/copilot_internal/v2/token`;
  const answer = await githubJson(
    url,
    { method: 'GET', headers: { ...editorHeaders(), authorization: `token ${githubToken}` } },
    [githubToken],
  );
  const body = (answer.body ?? {}) as Record<string, unknown>;
  if (answer.status === 200 && typeof body.token === 'string' && body.token) {
    return tokenTimes(body.token, body, Date.now());
  }
  const detail = githubMessage(
    answer.body,
    [githubToken, body.token].filter((secret): secret is string => typeof secret === 'string'),
  );
  const said = `${url} answered HTTP ${answer.status}${detail ? `: ${detail}` : ''}`;
  if (answer.status === 401) {
    throw new LoginRefusedError(
      `GitHub no longer accepts the stored Copilot login (${said}): it was revoked or has expired. ` +
        `Call provider_key {"profile": "${profile}"} so the user logs in again (or run ` +
        `\`delegate copilot-login ${profile}\` in a terminal).`,
    );
  }
  if (answer.status === 403 || answer.status === 404) {
    throw new UserError(
      `GitHub gives this account no Copilot API token (${said}). Check that it has a Copilot ` +
        'subscription (github.com/settings/copilot), or log in with another account.',
    );
  }
  throw new ProviderError(`Getting a Copilot API token failed: ${said}.`, 'http', answer.status);
}

/** Refresh a minute before GitHub's `refresh_in` (else five before expiry), never after expiry. */
export function tokenTimes(
  token: string,
  body: Record<string, unknown>,
  now: number,
): Omit<CachedToken, 'loginId'> {
  const expiresAt =
    typeof body.expires_at === 'number' ? body.expires_at * 1000 : now + 25 * MINUTE_MS;
  const byRefreshIn =
    typeof body.refresh_in === 'number' ? now + body.refresh_in * 1000 - MINUTE_MS : undefined;
  const refreshAt = Math.max(
    now,
    Math.min(byRefreshIn ?? expiresAt - 5 * MINUTE_MS, expiresAt - MINUTE_MS),
  );
  const endpoints = body.endpoints as { api?: unknown } | undefined;
  const api =
    typeof endpoints?.api === 'string' && /^https?:\/\/[^/\s]+/i.test(endpoints.api)
      ? endpoints.api
      : '';
  return { token, expiresAt, refreshAt, ...(api ? { api: api.replace(/\/+$/, '') } : {}) };
}
