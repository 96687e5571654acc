import { ProviderError } from '../../wire/spec.ts';
import {
  COPILOT_CLIENT_ID,
  COPILOT_SCOPE,
  DEVICE_GRANT_TYPE,
  type GitHubUrls,
} from '../../config/copilot-endpoints.ts';
import { githubJson, githubMessage } from './github-http.ts';

/**
 * GitHub's OAuth device flow (docs.github.com, "Authorizing OAuth apps" → device flow; RFC 8628):
 * POST `login/device/code` for a user code, then poll `login/oauth/access_token` no faster than
 * `interval` seconds until the user has entered it. The client id and scope are those of the
 * Copilot clients named in copilot-endpoints.ts.
 */
export interface DeviceCode {
  deviceCode: string;
  userCode: string;
  verificationUri: string;
  intervalS: number;
  expiresInS: number;
}

/** What one poll said. */
export type PollAnswer =
  | { kind: 'token'; githubToken: string }
  | { kind: 'pending' }
  /** Poll less often: GitHub names the new interval (else it is 5 s longer). */
  | { kind: 'slow_down'; intervalS?: number }
  | { kind: 'expired' }
  | { kind: 'denied' }
  | { kind: 'failed'; detail: string };

/** GitHub's documented minimum when it names none; never poll faster than once a second. */
const DEFAULT_INTERVAL_S = 5;
const SLOW_DOWN_STEP_S = 5;

export async function requestDeviceCode(github: GitHubUrls): Promise<DeviceCode> {
  const url = `${github.web}/login/device/code`;
  const answer = await githubJson(
    url,
    { method: 'POST', headers: {}, body: { client_id: COPILOT_CLIENT_ID, scope: COPILOT_SCOPE } },
    [],
  );
  const body = (answer.body ?? {}) as Record<string, unknown>;
  const { device_code, user_code, verification_uri } = body;
  if (
    answer.status !== 200 ||
    typeof device_code !== 'string' ||
    typeof user_code !== 'string' ||
    typeof verification_uri !== 'string'
  ) {
    const secrets = typeof device_code === 'string' ? [device_code] : [];
    const detail = githubMessage(answer.body, secrets) || 'no device code in the answer';
    throw new ProviderError(
      `GitHub did not start the login (${url} answered HTTP ${answer.status}: ${detail}).`,
      'http',
      answer.status,
    );
  }
  return {
    deviceCode: device_code,
    userCode: user_code,
    verificationUri: verification_uri,
    intervalS: positiveOr(body.interval, DEFAULT_INTERVAL_S),
    expiresInS: positiveOr(body.expires_in, 900),
  };
}

/** One poll of the access-token endpoint; network failures throw (the caller polls again). */
export async function pollForToken(github: GitHubUrls, deviceCode: string): Promise<PollAnswer> {
  const answer = await githubJson(
    `${github.web}/login/oauth/access_token`,
    {
      method: 'POST',
      headers: {},
      body: {
        client_id: COPILOT_CLIENT_ID,
        device_code: deviceCode,
        grant_type: DEVICE_GRANT_TYPE,
      },
    },
    [deviceCode],
  );
  const body = (answer.body ?? {}) as Record<string, unknown>;
  if (answer.status === 200 && typeof body.access_token === 'string' && body.access_token) {
    return { kind: 'token', githubToken: body.access_token };
  }
  switch (body.error) {
    case 'authorization_pending':
      return { kind: 'pending' };
    case 'slow_down':
      return typeof body.interval === 'number' && body.interval > 0
        ? { kind: 'slow_down', intervalS: body.interval }
        : { kind: 'slow_down' };
    case 'expired_token':
      return { kind: 'expired' };
    case 'access_denied':
      return { kind: 'denied' };
    default: {
      if (answer.status >= 500 || answer.status === 429) {
        throw new ProviderError(`GitHub answered HTTP ${answer.status}.`, 'http', answer.status);
      }
      const detail = githubMessage(answer.body, [deviceCode]) || `HTTP ${answer.status}`;
      return { kind: 'failed', detail };
    }
  }
}

/** The wait before the next poll: GitHub's new interval after slow_down, else 5 s more. */
export function nextIntervalS(currentS: number, answer: PollAnswer): number {
  if (answer.kind !== 'slow_down') return currentS;
  return Math.max(answer.intervalS ?? currentS + SLOW_DOWN_STEP_S, currentS, 1);
}

function positiveOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : fallback;
}

/** The user denied, the code expired, or GitHub refused the flow: said once, then forgotten. */
export function endedText(outcome: 'expired' | 'denied' | 'failed', detail?: string): string {
  switch (outcome) {
    case 'expired':
      return 'The login code expired before the user entered it; nothing was stored.';
    case 'denied':
      return 'The user denied the login on GitHub; nothing was stored.';
    default:
      return `GitHub ended the login (${detail ?? 'no reason given'}); nothing was stored.`;
  }
}
