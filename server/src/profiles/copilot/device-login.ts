import { setTimeout as sleep } from 'node:timers/promises';
import { currentProcessIdentity, isProcessAlive } from '../../util/process-identity.ts';
import {
  readCopilotState,
  updateCopilotState,
  usableLogin,
  type CopilotPlace,
  type PendingLogin,
} from './copilot-store.ts';
import { nextIntervalS, pollForToken, requestDeviceCode, type PollAnswer } from './device-flow.ts';

/**
 * A device-flow login that survives the process that started it: the flow is stored (0600), any
 * process may move it on, and each poll is claimed under the settings lock so GitHub's interval
 * holds across processes. Nothing here ever waits for the user inside a tool call.
 */
export type LoginStep =
  | { kind: 'authorised' }
  | { kind: 'waiting'; pending: PendingLogin }
  | { kind: 'ended'; pending: PendingLogin };

/** Starts a new flow for `place`, replacing an unfinished one; its login will replace the stored one. */
export async function startDeviceLogin(place: CopilotPlace): Promise<PendingLogin> {
  const code = await requestDeviceCode(place.github);
  const now = Date.now();
  const intervalS = Math.max(1, code.intervalS);
  const pending: PendingLogin = {
    deviceCode: code.deviceCode,
    userCode: code.userCode,
    verificationUri: code.verificationUri,
    intervalS,
    expiresAt: now + code.expiresInS * 1000,
    nextPollAt: now + intervalS * 1000,
    github: place.github,
  };
  await updateCopilotState(place.dataHome, (state) => {
    state.pending[place.apiOrigin] = pending;
  });
  return pending;
}

/**
 * Moves the stored flow on by at most one poll, and only once its interval has passed. A token
 * GitHub grants becomes the login. Undefined when no flow is pending and no login exists.
 */
export async function pollPendingLogin(place: CopilotPlace): Promise<LoginStep | undefined> {
  const pending = readCopilotState(place.dataHome).pending[place.apiOrigin];
  if (!pending || pending.outcome) return currentStep(place);
  if (Date.now() >= pending.expiresAt) return settle(place, pending, { kind: 'expired' });
  if (Date.now() < pending.nextPollAt) return { kind: 'waiting', pending };
  const claimed = await updateCopilotState(place.dataHome, (state) => {
    const current = state.pending[place.apiOrigin];
    if (!isSame(current, pending) || current.nextPollAt !== pending.nextPollAt) return false;
    current.nextPollAt = Date.now() + current.intervalS * 1000;
    return true;
  });
  if (!claimed) return currentStep(place);
  return settle(place, pending, await pollForToken(pending.github, pending.deviceCode));
}

/** Where the login of `place` stands, without asking GitHub. */
function currentStep(place: CopilotPlace): LoginStep | undefined {
  const state = readCopilotState(place.dataHome);
  const pending = state.pending[place.apiOrigin];
  if (pending) return pending.outcome ? { kind: 'ended', pending } : { kind: 'waiting', pending };
  return usableLogin(state, place) ? { kind: 'authorised' } : undefined;
}

/** Records what GitHub answered; a token is stored even when a newer flow replaced this one. */
function settle(place: CopilotPlace, polled: PendingLogin, answer: PollAnswer): Promise<LoginStep> {
  return updateCopilotState(place.dataHome, (state): LoginStep => {
    const current = state.pending[place.apiOrigin];
    const isCurrent = isSame(current, polled);
    if (answer.kind === 'token') {
      state.logins[place.apiOrigin] = {
        githubToken: answer.githubToken,
        githubApi: polled.github.api,
        savedAt: new Date().toISOString(),
      };
      delete state.tokens[place.apiOrigin];
      if (isCurrent) delete state.pending[place.apiOrigin];
      return { kind: 'authorised' };
    }
    if (!isCurrent) return current ? { kind: 'waiting', pending: current } : endedAs(polled);
    if (answer.kind === 'pending') return { kind: 'waiting', pending: current };
    if (answer.kind === 'slow_down') {
      current.intervalS = nextIntervalS(current.intervalS, answer);
      current.nextPollAt = Date.now() + current.intervalS * 1000;
      return { kind: 'waiting', pending: current };
    }
    current.outcome = answer.kind;
    if (answer.kind === 'failed') current.detail = answer.detail;
    return { kind: 'ended', pending: current };
  });
}

/** Drops a flow that ended once its outcome has been reported. */
export async function forgetEndedLogin(place: CopilotPlace, pending: PendingLogin): Promise<void> {
  await updateCopilotState(place.dataHome, (state) => {
    if (isSame(state.pending[place.apiOrigin], pending)) delete state.pending[place.apiOrigin];
  });
}

/**
 * Polls in the background of this process until the flow ends, unless a live process already
 * does (its pid and start time are stored with the flow). Best effort: every provider_key call
 * and model call polls too.
 */
export async function ensureBackgroundPoller(place: CopilotPlace): Promise<void> {
  const me = currentProcessIdentity();
  const pending = await updateCopilotState(place.dataHome, (state) => {
    const current = state.pending[place.apiOrigin];
    if (!current || current.outcome || (current.poller && isProcessAlive(current.poller))) {
      return undefined;
    }
    current.poller = me;
    return current;
  });
  if (pending) void waitForLogin(place, pending, { isBackground: true }).catch(() => undefined);
}

/** Polls `pending` at its interval until it ends (or another flow replaces it). */
export async function waitForLogin(
  place: CopilotPlace,
  pending: PendingLogin,
  { isBackground }: { isBackground: boolean },
): Promise<LoginStep | undefined> {
  for (;;) {
    const current = readCopilotState(place.dataHome).pending[place.apiOrigin];
    if (!isSame(current, pending) || current.outcome) return currentStep(place);
    const waitMs = Math.min(current.nextPollAt, current.expiresAt) - Date.now();
    await sleep(Math.max(0, waitMs), undefined, { ref: !isBackground });
    const step = await pollPendingLogin(place).catch(() => 'unreachable' as const);
    // GitHub unreachable for a moment: the claim already moved the next poll on.
    if (step === 'unreachable') await sleep(1000, undefined, { ref: !isBackground });
    else if (step?.kind !== 'waiting') return step;
  }
}

function isSame(current: PendingLogin | undefined, pending: PendingLogin): current is PendingLogin {
  return current?.deviceCode === pending.deviceCode;
}

function endedAs(pending: PendingLogin): LoginStep {
  return {
    kind: 'ended',
    pending: { ...pending, outcome: 'failed', detail: 'replaced by a newer login' },
  };
}
