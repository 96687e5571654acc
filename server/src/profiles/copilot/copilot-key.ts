import { credentialsPath, type Environment } from '../../config/paths.ts';
import { copilotPlace } from './copilot-profile.ts';
import {
  updateCopilotState,
  type CachedToken,
  type CopilotPlace,
  type PendingLogin,
} from './copilot-store.ts';
import { copilotApiToken, LoginRefusedError } from './copilot-token.ts';
import { endedText } from './device-flow.ts';
import {
  ensureBackgroundPoller,
  forgetEndedLogin,
  pollPendingLogin,
  startDeviceLogin,
} from './device-login.ts';
import type { ResolvedProfile } from '../../config/resolved-profile.ts';

/**
 * `provider_key` on a copilot profile, one step per call and never a wait for the user: starts
 * the device flow and shows the code (a poller in this server finishes it), reports a pending
 * flow after polling it once, reports how a flow ended, or checks an existing login by getting
 * an API token. Texts carry the user code and URL, which are meant to be shown; never a token.
 */
export async function copilotKeyStep(profile: ResolvedProfile, env: Environment): Promise<string> {
  const place = copilotPlace(profile, env);
  const step = await pollPendingLogin(place);
  if (step?.kind === 'waiting') {
    await ensureBackgroundPoller(place);
    return waitingText(profile.name, step.pending);
  }
  if (step?.kind === 'ended') {
    await forgetEndedLogin(place, step.pending);
    const again =
      step.pending.outcome === 'denied'
        ? 'Do not ask again unless the user wants to.'
        : `Call provider_key {"profile": "${profile.name}"} again for a new code.`;
    return `${endedText(step.pending.outcome ?? 'failed', step.pending.detail)} ${again}`;
  }
  let note = '';
  if (step?.kind === 'authorised') {
    try {
      const token = await copilotApiToken(place, profile.name);
      return loggedInText(profile.name, place, token);
    } catch (error) {
      if (!(error instanceof LoginRefusedError)) throw error;
      await forgetLogin(place);
      note =
        'GitHub no longer accepts the stored login (revoked or expired); a new one starts now.\n';
    }
  }
  const pending = await startDeviceLogin(place);
  await ensureBackgroundPoller(place);
  return note + startText(profile.name, place, pending);
}

/** Forgets the login of `place`, its API token and any unfinished flow. True when there was any. */
export async function forgetLogin(place: CopilotPlace): Promise<boolean> {
  return updateCopilotState(place.dataHome, (state) => {
    const had = [state.logins, state.tokens, state.pending].some((part) => place.apiOrigin in part);
    delete state.logins[place.apiOrigin];
    delete state.tokens[place.apiOrigin];
    delete state.pending[place.apiOrigin];
    return had;
  });
}

function startText(name: string, place: CopilotPlace, pending: PendingLogin): string {
  return (
    `To log profile "${name}" in to GitHub Copilot, ask the user to open ${pending.verificationUri} and enter the ` +
    `code ${pending.userCode} (valid ${minutesLeft(pending)} min). This server finishes the login in the ` +
    `background once they approve; then call provider_key {"profile": "${name}"} again to confirm. The code ` +
    `is not a secret; the GitHub token it yields is stored in ${credentialsPath(place.dataHome)} (mode 0600) ` +
    'and never reaches you.'
  );
}

function waitingText(name: string, pending: PendingLogin): string {
  return (
    `Still waiting for the user to approve the GitHub login of profile "${name}": open ` +
    `${pending.verificationUri} and enter the code ${pending.userCode} (${minutesLeft(pending)} min left). ` +
    'Call provider_key again once they have.'
  );
}

export function loggedInText(name: string, place: CopilotPlace, token: CachedToken): string {
  const until = new Date(token.expiresAt).toISOString().slice(11, 16);
  return (
    `Profile "${name}" is logged in to GitHub Copilot for ${place.apiOrigin}: the login is stored in ` +
    `${credentialsPath(place.dataHome)} (mode 0600) and serves every copilot profile on that API; its ` +
    `API token is valid until ${until} UTC and renewed automatically.`
  );
}

function minutesLeft(pending: PendingLogin): number {
  return Math.max(1, Math.round((pending.expiresAt - Date.now()) / 60_000));
}
