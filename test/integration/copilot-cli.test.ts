/**
 * `delegate copilot-login` (and `provider-key` on a copilot profile) in a terminal, against a
 * fake GitHub on 127.0.0.1: the URL and code printed, polling at GitHub's interval, exit codes.
 */
import { spawn } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  DEVICE_CODE,
  GITHUB_TOKEN,
  githubEnv,
  startFakeGitHub,
  USER_CODE,
  type FakeGitHub,
  type PollReply,
} from '../helpers/fake-github.ts';
import { PLUGIN_ROOT } from '../helpers/mcp-server.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';

const LAUNCHER = join(PLUGIN_ROOT, 'bin', 'delegate');
const API = 'https://api.githubcopilot.com';
const COPILOT_TOKEN = 'cop-canary-token-1a2b3c4d5e';

let world: TempEnv;
let github: FakeGitHub | undefined;
beforeEach(() => {
  world = createTempEnv();
  world.writeConfig({
    profiles: {
      cp: { format: 'copilot', model: 'gpt-4.1' },
      plain: { format: 'openai', baseUrl: 'https://api.example.test/v1', model: 'm' },
    },
  });
});
afterEach(async () => {
  await github?.close();
  github = undefined;
  world.cleanup();
});

const credentialsFile = () => join(world.dataHome, 'credentials.json');
const copilotSection = () =>
  JSON.parse(readFileSync(credentialsFile(), 'utf8')).copilot as Record<string, any> | undefined;

/** Runs the CLI without blocking this process, which serves the fake GitHub. */
function run(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const command = `umask 000; exec "${LAUNCHER}" ${args.map((arg) => `'${arg}'`).join(' ')}`;
  const child = spawn('sh', ['-c', command], {
    env: { ...world.env, ...(github ? githubEnv(github) : {}) },
    cwd: world.project,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => {
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}

async function withGitHub(polls: PollReply[], expiresInS?: number) {
  github = await startFakeGitHub({ polls, ...(expiresInS ? { expiresInS } : {}) });
}

describe('delegate copilot-login', () => {
  it('prints the URL and code, polls through pending and slow_down, stores the login 0600', async () => {
    await withGitHub(['pending', { error: 'slow_down', interval: 2 }, 'token']);
    const result = await run(['copilot-login', 'cp']);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stderr).toContain(
      `Log profile "cp" in to GitHub Copilot: open ${github!.url}/login/device and enter the code\n\n    ${USER_CODE}\n`,
    );
    expect(result.stdout).toMatch(
      new RegExp(`^Profile "cp" is logged in to GitHub Copilot for ${API}: the login is stored in`),
    );
    const times = github!.to('POST /login/oauth/access_token').map((poll) => poll.at);
    expect(times).toHaveLength(3);
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(1950);
    expect(github!.to('GET /copilot_internal/v2/token')).toHaveLength(1);
    expect(statSync(credentialsFile()).mode & 0o777).toBe(0o600);
    expect(copilotSection()?.logins?.[API]?.githubToken).toBe(GITHUB_TOKEN);
    expect(copilotSection()?.tokens?.[API]?.token).toBe(COPILOT_TOKEN);
    for (const secret of [GITHUB_TOKEN, COPILOT_TOKEN, DEVICE_CODE]) {
      expect(result.stdout + result.stderr).not.toContain(secret);
    }
  });

  it('provider-key on a copilot profile runs the same login; on others it still reads a key', async () => {
    await withGitHub(['token']);
    const result = await run(['provider-key', 'cp']);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stderr).toContain(`enter the code\n\n    ${USER_CODE}`);
    expect(copilotSection()?.logins?.[API]).toBeDefined();
    const plain = await run(['provider-key', 'plain']);
    expect(plain.status).toBe(1);
    expect(plain.stderr).toBe('delegate: The key was empty; nothing was stored.\n');
  });

  it('expired: exits 1 saying so, nothing stored', async () => {
    await withGitHub(['pending', 'expired']);
    const result = await run(['copilot-login', 'cp']);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      'The login code expired before the user entered it; nothing was stored. Run the command again to retry.\n',
    );
    expect(copilotSection()).toBeUndefined();
  });

  it('denied: exits 1 saying so, nothing stored', async () => {
    await withGitHub(['denied']);
    const result = await run(['copilot-login', 'cp']);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('The user denied the login on GitHub; nothing was stored.');
    expect(copilotSection()).toBeUndefined();
  });

  it('--logout forgets the login; wrong profiles and arguments are refused', async () => {
    await withGitHub(['token']);
    expect((await run(['copilot-login', 'cp'])).status).toBe(0);
    const out = await run(['copilot-login', 'cp', '--logout']);
    expect(out).toMatchObject({ status: 0 });
    expect(out.stdout).toBe(
      `Forgot the GitHub Copilot login for ${API} (every copilot profile on that API).\n`,
    );
    expect(copilotSection()).toBeUndefined();
    expect((await run(['copilot-login', 'cp', '--logout'])).stdout).toBe(
      `There was no GitHub Copilot login for ${API}.\n`,
    );
    const plain = await run(['copilot-login', 'plain']);
    expect(plain).toMatchObject({ status: 1 });
    expect(plain.stderr).toBe(
      'delegate: Profile "plain" is openai, not copilot; store its key with `delegate provider-key plain`.\n',
    );
    expect((await run(['copilot-login'])).status).toBe(2);
    expect((await run(['copilot-login', 'cp', GITHUB_TOKEN])).status).toBe(2);
  });
});
