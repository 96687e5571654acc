/**
 * GitHub Copilot logins end to end: the built server over real stdio, a fake GitHub (device
 * flow and token endpoint) and a fake Copilot chat API, both on 127.0.0.1.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeProvider } from '../helpers/fake-provider.ts';
import {
  CLIENT_ID,
  DEVICE_CODE,
  githubEnv,
  startFakeGitHub,
  USER_CODE,
  type FakeGitHub,
  type FakeGitHubOptions,
} from '../helpers/fake-github.ts';
import { startServer, type ServerHandle } from '../helpers/mcp-server.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';
import { waitFor } from '../helpers/wait.ts';
import { scaledMs, settle } from '../helpers/timing.ts';

/** How much sooner than its interval a poll may arrive after one that load held back. */
const ARRIVAL_JITTER_MS = scaledMs(50);

const API = 'https://api.githubcopilot.com';

let world: TempEnv;
let github: FakeGitHub | undefined;
let chat: FakeProvider;
let server: ServerHandle | undefined;

beforeEach(async () => {
  world = createTempEnv();
  chat = await startFakeProvider({ respond: () => ({ text: 'copilot says hi' }) });
  world.writeConfig({ profiles: { cp: { format: 'copilot', model: 'gpt-4.1' } } });
});
afterEach(async () => {
  await server?.close();
  await github?.close();
  await chat.close();
  server = github = undefined;
  world.cleanup();
});

const credentialsFile = () => join(world.dataHome, 'credentials.json');
const copilotSection = () =>
  JSON.parse(readFileSync(credentialsFile(), 'utf8')).copilot as Record<string, any> | undefined;
const pendingLogin = () => copilotSection()?.pending?.[API];
const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function start(options: FakeGitHubOptions): Promise<ServerHandle> {
  github = await startFakeGitHub({ chatApi: chat.openaiBaseUrl, ...options });
  server = await startServer({ ...world.env, ...githubEnv(github) });
  return server;
}

describe('provider_key on a copilot profile: the device flow', () => {
  it('shows the URL and code, then finishes in the background through pending and slow_down', async () => {
    const handle = await start({
      polls: ['pending', { error: 'slow_down', interval: 2 }, 'token'],
    });
    const started = await handle.callText('provider_key', { profile: 'cp' });
    expect(started.isError).toBe(false);
    expect(started.text).toContain(
      `To log profile "cp" in to GitHub Copilot, ask the user to open ${github!.url}/login/device and enter the code ${USER_CODE} (valid 15 min).`,
    );
    expect(github!.to('POST /login/device/code')[0]?.body).toEqual({
      client_id: CLIENT_ID,
      scope: 'read:user',
    });
    expect(statSync(credentialsFile()).mode & 0o777).toBe(0o600);
    expect(pendingLogin()).toMatchObject({ userCode: USER_CODE, intervalS: 1 });

    await waitFor(() => copilotSection()?.logins?.[API] !== undefined, 15_000);
    const polls = github!.to('POST /login/oauth/access_token');
    expect(polls).toHaveLength(3);
    for (const poll of polls) {
      expect(poll.body).toEqual({
        client_id: CLIENT_ID,
        device_code: DEVICE_CODE,
        grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
      });
    }
    const [first, second, third] = polls.map((poll) => poll.at);
    // Gaps are seen where the polls arrive: a loaded machine delays one more than the next.
    expect(second! - first!).toBeGreaterThanOrEqual(1_000 - ARRIVAL_JITTER_MS);
    // slow_down named a 2 s interval: the next poll waited that long.
    expect(third! - second!).toBeGreaterThanOrEqual(2_000 - ARRIVAL_JITTER_MS);
    expect(pendingLogin()).toBeUndefined();
    expect(statSync(credentialsFile()).mode & 0o777).toBe(0o600);

    const confirmed = await handle.callText('provider_key', { profile: 'cp' });
    expect(confirmed.text).toMatch(
      new RegExp(
        `^Profile "cp" is logged in to GitHub Copilot for ${API}: the login is stored in .*credentials\\.json \\(mode 0600\\) and serves every copilot profile on that API; its API token is valid until \\d\\d:\\d\\d UTC`,
      ),
    );
    expect(github!.to('GET /copilot_internal/v2/token')).toHaveLength(1);
    expect(github!.unscripted).toEqual([]);
  });

  it('a second call while waiting reports the same code and starts no second flow or poller', async () => {
    const handle = await start({ polls: ['pending'] });
    await handle.callText('provider_key', { profile: 'cp' });
    const again = await handle.callText('provider_key', { profile: 'cp' });
    expect(again.text).toMatch(
      new RegExp(
        `^Still waiting for the user to approve the GitHub login of profile "cp": open ${github!.url}/login/device and enter the code ${USER_CODE}`,
      ),
    );
    await settle(2_500);
    expect(github!.to('POST /login/device/code')).toHaveLength(1);
    const times = github!.to('POST /login/oauth/access_token').map((poll) => poll.at);
    // One poller at the 1 s interval, not two.
    for (let index = 1; index < times.length; index += 1) {
      expect(times[index]! - times[index - 1]!).toBeGreaterThanOrEqual(1_000 - ARRIVAL_JITTER_MS);
    }
  });

  it('expired: GitHub says expired_token; the next call says so, a later one starts a new code', async () => {
    const handle = await start({ polls: ['pending', 'expired'] });
    await handle.callText('provider_key', { profile: 'cp' });
    await waitFor(() => pendingLogin()?.outcome === 'expired', 10_000);
    const told = await handle.callText('provider_key', { profile: 'cp' });
    expect(told).toEqual({
      isError: false,
      text: 'The login code expired before the user entered it; nothing was stored. Call provider_key {"profile": "cp"} again for a new code.',
    });
    expect(copilotSection()).toBeUndefined();
    const restarted = await handle.callText('provider_key', { profile: 'cp' });
    expect(restarted.text).toContain(`enter the code ${USER_CODE}`);
    expect(github!.to('POST /login/device/code')).toHaveLength(2);
  });

  it('expired here: the code runs out while GitHub still answers pending', async () => {
    const handle = await start({ polls: ['pending'], expiresInS: 2 });
    await handle.callText('provider_key', { profile: 'cp' });
    await waitFor(() => pendingLogin()?.outcome === 'expired', 10_000);
    const told = await handle.callText('provider_key', { profile: 'cp' });
    expect(told.text).toMatch(/^The login code expired before the user entered it/);
    expect(copilotSection()?.logins).toBeUndefined();
  });

  it('denied: access_denied is reported once and nothing is stored', async () => {
    const handle = await start({ polls: ['denied'] });
    await handle.callText('provider_key', { profile: 'cp' });
    await waitFor(() => pendingLogin()?.outcome === 'denied', 10_000);
    const told = await handle.callText('provider_key', { profile: 'cp' });
    expect(told.text).toBe(
      'The user denied the login on GitHub; nothing was stored. Do not ask again unless the user wants to.',
    );
    expect(copilotSection()).toBeUndefined();
  });

  it('a restarted server finishes a login another server started', async () => {
    const handle = await start({ polls: ['pending', 'pending', 'pending', 'token'] });
    await handle.callText('provider_key', { profile: 'cp' });
    const firstPid = handle.pid!;
    await handle.close();
    await waitFor(() => !isRunning(firstPid), 5_000);
    server = await startServer({ ...world.env, ...githubEnv(github!) });
    await waitFor(() => Date.now() > pendingLogin().nextPollAt, 5_000);
    const polled = await server.callText('provider_key', { profile: 'cp' });
    expect(polled.text).toMatch(/^Still waiting for the user/);
    await waitFor(() => copilotSection()?.logins?.[API] !== undefined, 15_000);
  });
});

describe('copilot profiles in provider_set and providers', () => {
  it('need no base_url, are never local, and show where their login stands', async () => {
    world.writeConfig({});
    const handle = await start({ polls: ['pending', 'token'] });
    const saved = await handle.callText('provider_set', {
      name: 'cp',
      format: 'copilot',
      model: 'gpt-4.1',
    });
    expect(saved.text).toContain(`Added profile "cp" in `);
    expect(saved.text).toContain(
      `: copilot · model gpt-4.1 · ${API}. Takes effect at the next call.`,
    );
    expect(saved.text).toContain(
      `Key: NOT LOGGED IN to GitHub Copilot for ${API}: call provider_key.`,
    );
    const local = await handle.callText('provider_set', { name: 'cp', local: true });
    expect(local).toMatchObject({ isError: true });
    expect(local.text).toContain('- local: must not be true: a copilot profile calls GitHub');

    await handle.callText('provider_key', { profile: 'cp' });
    const pending = await handle.callText('providers', {});
    expect(pending.text).toContain(
      `GitHub login PENDING: the user enters ${USER_CODE} at ${github!.url}/login/device`,
    );
    await waitFor(() => copilotSection()?.logins?.[API] !== undefined, 15_000);
    const ready = await handle.callText('providers', {});
    expect(ready.text).toContain(
      `- cp (default): copilot · model gpt-4.1 · ${API} · remote · GitHub login stored in credentials.json for ${API}`,
    );
  });
});
