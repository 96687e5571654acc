import { createHash } from 'node:crypto';
import { readCredentialsSection, writeCredentialsSection } from '../credentials.ts';
import { settingsLockPath } from '../../config/paths.ts';
import { withFileLock } from '../../util/file-lock.ts';
import type { ProcessIdentity } from '../../util/process-identity.ts';
import type { GitHubUrls } from '../../config/copilot-endpoints.ts';

/**
 * Copilot's secrets live in the `copilot` section of credentials.json (mode 0600, written like the
 * keys beside it), keyed by the origin of the Copilot API they are for: a login made for
 * https://api.githubcopilot.com serves every copilot profile that calls it and no other host.
 * Nothing here ever puts a token, a device code or a hash of them into a message.
 */
export interface CopilotState {
  logins: Record<string, CopilotLogin>;
  pending: Record<string, PendingLogin>;
  tokens: Record<string, CachedToken>;
}

/** A GitHub OAuth token from the device flow; sent only to `githubApi` to get API tokens. */
export interface CopilotLogin {
  githubToken: string;
  githubApi: string;
  savedAt: string;
}

/** A device flow waiting for the user to enter the code (times in ms since the epoch). */
export interface PendingLogin {
  deviceCode: string;
  userCode: string;
  verificationUri: string;
  intervalS: number;
  expiresAt: number;
  /** No poll before this (GitHub's interval, grown by every slow_down). */
  nextPollAt: number;
  github: GitHubUrls;
  /** How GitHub ended it without a token; reported once, then the entry is dropped. */
  outcome?: 'expired' | 'denied' | 'failed';
  detail?: string;
  /** The process polling it in the background (pid + start time), so there is only one. */
  poller?: ProcessIdentity;
}

/** A short-lived Copilot API token (ms since the epoch). */
export interface CachedToken {
  token: string;
  expiresAt: number;
  /** Replaced from this moment on (GitHub's `refresh_in`, a minute early). */
  refreshAt: number;
  /** `endpoints.api` of the exchange: where this account's chat API is. */
  api?: string;
  /** Which login it was issued for: a short hash, so a new login never uses an old token. */
  loginId: string;
}

/** Where one login lives: the data home, the Copilot API origin, and the GitHub it comes from. */
export interface CopilotPlace {
  dataHome: string;
  apiOrigin: string;
  github: GitHubUrls;
}

const SECTION = 'copilot';

export function readCopilotState(dataHome: string): CopilotState {
  const raw = readCredentialsSection(dataHome, SECTION) as Partial<CopilotState> | undefined;
  return {
    logins: entries(raw?.logins, (login: Partial<CopilotLogin>) =>
      strings(login.githubToken, login.githubApi),
    ),
    pending: entries(
      raw?.pending,
      (pending: Partial<PendingLogin>) =>
        strings(pending.deviceCode, pending.userCode, pending.verificationUri) &&
        numbers(pending.intervalS, pending.expiresAt, pending.nextPollAt) &&
        strings(pending.github?.web, pending.github?.api),
    ),
    tokens: entries(
      raw?.tokens,
      (token: Partial<CachedToken>) =>
        strings(token.token, token.loginId) && numbers(token.expiresAt, token.refreshAt),
    ),
  };
}

/** Reads, changes and writes the section under the settings lock (shared with every process). */
export async function updateCopilotState<T>(
  dataHome: string,
  change: (state: CopilotState) => T,
): Promise<T> {
  return withFileLock(settingsLockPath(dataHome), () => {
    const state = readCopilotState(dataHome);
    const result = change(state);
    const isEmpty = [state.logins, state.pending, state.tokens].every(
      (part) => Object.keys(part).length === 0,
    );
    writeCredentialsSection(dataHome, SECTION, isEmpty ? undefined : state);
    return Promise.resolve(result);
  });
}

/** The stored login of `place`, if it was made with the GitHub this process talks to. */
export function usableLogin(state: CopilotState, place: CopilotPlace): CopilotLogin | undefined {
  const login = state.logins[place.apiOrigin];
  return login && login.githubApi === place.github.api ? login : undefined;
}

export function loginId(githubToken: string): string {
  return createHash('sha256').update(githubToken).digest('hex').slice(0, 16);
}

function entries<T>(value: unknown, isValid: (entry: Partial<T>) => boolean): Record<string, T> {
  if (!value || typeof value !== 'object') return {};
  return Object.fromEntries(
    Object.entries(value as Record<string, Partial<T> | null>).filter(
      (entry): entry is [string, T] => !!entry[1] && isValid(entry[1]),
    ),
  );
}

const strings = (...values: unknown[]) => values.every((value) => typeof value === 'string');
const numbers = (...values: unknown[]) => values.every((value) => Number.isFinite(value));
