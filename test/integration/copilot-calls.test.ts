/**
 * Model calls on a copilot profile: the GitHub login exchanged for short-lived API tokens, the
 * headers Copilot requires, refresh, the origin binding, and the token canary across tool
 * results, logs, the ledger, task files and a task worker's environment.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readLedger } from '../../server/src/calls/ledger.ts';
import {
  byAssistantTurn,
  startFakeProvider,
  type FakeProvider,
  type FakeReply,
  type RecordedRequest,
} from '../helpers/fake-provider.ts';
import {
  DEVICE_CODE,
  GITHUB_TOKEN,
  githubEnv,
  startFakeGitHub,
  USER_CODE,
  type FakeGitHub,
  type PollReply,
} from '../helpers/fake-github.ts';
import { initRepository } from '../helpers/git-project.ts';
import { startServer, type ServerHandle } from '../helpers/mcp-server.ts';
import { endTaskTest } from '../helpers/processes.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';
import { pollTaskStatus, taskIdOf, waitFor } from '../helpers/wait.ts';

const API = 'https://api.githubcopilot.com';
const COPILOT_TOKEN = 'cop-canary-token-1a2b3c4d5e';

let world: TempEnv;
let github: FakeGitHub;
let chat: FakeProvider;
let server: ServerHandle | undefined;
/** Replies the fake chat API gives first; then a plain answer (or `taskReplies` for tool calls). */
let queued: FakeReply[];
let taskReplies: ((request: RecordedRequest) => FakeReply) | undefined;

beforeEach(async () => {
  world = createTempEnv();
  queued = [];
  taskReplies = undefined;
  chat = await startFakeProvider({
    models: ['gpt-4.1', 'claude-sonnet-4'],
    respond: (request) =>
      queued.shift() ??
      (request.body?.tools && taskReplies ? taskReplies(request) : { text: 'copilot says hi' }),
  });
  world.writeConfig({ profiles: { cp: { format: 'copilot', model: 'gpt-4.1' } } });
});
afterEach(async () => {
  await endTaskTest(world, server, github, chat);
  server = undefined;
});

const exchanges = () => github.to('GET /copilot_internal/v2/token');
const credentialsFile = () => join(world.dataHome, 'credentials.json');
const copilotSection = () =>
  JSON.parse(readFileSync(credentialsFile(), 'utf8')).copilot as Record<string, any> | undefined;

/** A server whose copilot login went through the device flow (one poll, approved). */
async function loggedIn(polls: PollReply[] = ['token']): Promise<ServerHandle> {
  github = await startFakeGitHub({ polls, chatApi: chat.openaiBaseUrl });
  server = await startServer({ ...world.env, ...githubEnv(github) });
  await server.callText('provider_key', { profile: 'cp' });
  if (polls.at(-1) === 'token') {
    await waitFor(() => copilotSection()?.logins?.[API] !== undefined, 15_000);
  }
  return server;
}

const bearerOf = (request: RecordedRequest | undefined) => request?.headers.authorization;

describe('calls on a copilot profile', () => {
  it('go to the API GitHub names, with the Copilot token and editor headers, and cost 0', async () => {
    const handle = await loggedIn();
    const answer = await handle.callText('delegate', { task: 'hi', profile: 'cp' });
    expect(answer.isError, answer.text).toBe(false);
    expect(answer.text).toContain('copilot says hi');
    expect(exchanges()).toHaveLength(1);
    expect(exchanges()[0]?.headers).toMatchObject({
      authorization: `token ${GITHUB_TOKEN}`,
      accept: 'application/json',
      'editor-version': 'vscode/1.95.0',
      'editor-plugin-version': 'copilot-chat/0.26.7',
      'user-agent': 'GitHubCopilotChat/0.26.7',
    });
    const call = chat.requests[0]!;
    expect(call.pathname).toBe('/v1/chat/completions');
    expect(call.headers).toMatchObject({
      authorization: `Bearer ${COPILOT_TOKEN}`,
      'copilot-integration-id': 'vscode-chat',
      'editor-version': 'vscode/1.95.0',
      'editor-plugin-version': 'copilot-chat/0.26.7',
      'user-agent': 'GitHubCopilotChat/0.26.7',
      'openai-intent': 'conversation-panel',
      'x-github-api-version': '2025-04-01',
    });
    expect(call.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(call.body).toMatchObject({ model: 'gpt-4.1', stream: true });
    expect(readLedger(world.dataHome).at(-1)).toMatchObject({
      profile: 'cp',
      format: 'copilot',
      costUsd: 0,
    });
    // A fresh token is reused: the second call makes no exchange.
    await handle.callText('delegate', { task: 'again', profile: 'cp' });
    expect(exchanges()).toHaveLength(1);
    expect(bearerOf(chat.requests[1])).toBe(`Bearer ${COPILOT_TOKEN}`);
  });

  it('a short-lived API token is exchanged again before the next call', async () => {
    const handle = await loggedIn();
    Object.assign(github.exchange, {
      tokens: ['cop-short-1-aaaaaaaa', 'cop-short-2-bbbbbbbb'],
      lifetimeS: 2,
      refreshInS: 1,
    });
    await handle.callText('delegate', { task: 'one', profile: 'cp' });
    await handle.callText('delegate', { task: 'two', profile: 'cp' });
    expect(exchanges()).toHaveLength(2);
    expect(chat.requests.map(bearerOf)).toEqual([
      'Bearer cop-short-1-aaaaaaaa',
      'Bearer cop-short-2-bbbbbbbb',
    ]);
    expect(copilotSection()?.tokens?.[API]?.token).toBe('cop-short-2-bbbbbbbb');
    expect(statSync(credentialsFile()).mode & 0o777).toBe(0o600);
  });

  it('a 401 from the chat API gets a fresh token and one retry', async () => {
    const handle = await loggedIn();
    github.exchange.tokens = ['cop-dead-cccccccc', 'cop-live-dddddddd'];
    queued.push({ kind: 'error', status: 401, body: { error: { message: 'token expired' } } });
    const answer = await handle.callText('delegate', { task: 'hi', profile: 'cp' });
    expect(answer.isError, answer.text).toBe(false);
    expect(chat.requests.map(bearerOf)).toEqual([
      'Bearer cop-dead-cccccccc',
      'Bearer cop-live-dddddddd',
    ]);
  });

  it('while the login is pending, a call says which code to enter and sends nothing', async () => {
    const handle = await loggedIn(['pending']);
    const answer = await handle.callText('delegate', { task: 'hi', profile: 'cp' });
    expect(answer).toEqual({
      isError: true,
      text: `Profile "cp" (copilot) waits for the user to approve its GitHub login: open ${github.url}/login/device and enter the code ${USER_CODE}. Then call again.`,
    });
    expect(chat.requests).toHaveLength(0);
  });

  it('a login GitHub no longer accepts: the call says to log in again; provider_key starts anew', async () => {
    const handle = await loggedIn();
    github.exchange.status = 401;
    const answer = await handle.callText('delegate', { task: 'hi', profile: 'cp' });
    expect(answer.isError).toBe(true);
    expect(answer.text).toContain(
      'GitHub no longer accepts the stored Copilot login (' +
        `${github.url}/copilot_internal/v2/token answered HTTP 401: fake refusal 401): it was revoked or has expired. ` +
        'Call provider_key {"profile": "cp"} so the user logs in again',
    );
    const key = await handle.callText('provider_key', { profile: 'cp' });
    expect(key.text).toMatch(
      /^GitHub no longer accepts the stored login \(revoked or expired\); a new one starts now\.\nTo log profile "cp" in/,
    );
    expect(github.to('POST /login/device/code')).toHaveLength(2);
    expect(copilotSection()?.logins?.[API]).toBeUndefined();
    expect(chat.requests).toHaveLength(0);
  });

  it('an account without Copilot is told so', async () => {
    const handle = await loggedIn();
    github.exchange.status = 404;
    const answer = await handle.callText('delegate', { task: 'hi', profile: 'cp' });
    expect(answer.isError).toBe(true);
    expect(answer.text).toContain(
      `GitHub gives this account no Copilot API token (${github.url}/copilot_internal/v2/token answered HTTP 404: fake refusal 404)`,
    );
  });

  it('without a login, a call says how to log in and nothing is sent', async () => {
    github = await startFakeGitHub({ polls: ['pending'], chatApi: chat.openaiBaseUrl });
    server = await startServer({ ...world.env, ...githubEnv(github) });
    const answer = await server.callText('delegate', { task: 'hi', profile: 'cp' });
    expect(answer).toEqual({
      isError: true,
      text:
        `Profile "cp" (copilot) has no GitHub login for ${API}. Call provider_key {"profile": "cp"}: it shows a ` +
        'code for the user to enter on github.com (or the user runs `delegate copilot-login cp` in a terminal).',
    });
    expect(github.requests).toHaveLength(0);
    expect(chat.requests).toHaveLength(0);
  });

  it('a copilot profile pointed at another host gets neither the login nor a token', async () => {
    const elsewhere = await startFakeProvider({ respond: () => ({ text: 'attacker' }) });
    try {
      world.writeConfig({
        defaultProfile: 'cp',
        profiles: {
          cp: { format: 'copilot', model: 'gpt-4.1' },
          moved: { format: 'copilot', baseUrl: elsewhere.openaiBaseUrl, model: 'gpt-4.1' },
        },
      });
      const handle = await loggedIn();
      const answer = await handle.callText('delegate', { task: 'hi', profile: 'moved' });
      expect(answer.isError).toBe(true);
      expect(answer.text).toContain(
        `Profile "moved" (copilot) has no GitHub login for ${elsewhere.url}.`,
      );
      expect(elsewhere.requests).toHaveLength(0);
      expect(exchanges()).toHaveLength(0);
    } finally {
      await elsewhere.close();
    }
  });

  it('providers check lists the models through the Copilot API', async () => {
    const handle = await loggedIn();
    const { text } = await handle.callText('providers', { check: true });
    expect(text).toMatch(
      /check: reachable in \d+ ms; serves gpt-4\.1; models: gpt-4\.1, claude-sonnet-4/,
    );
  });
});

describe('the Copilot token canary', () => {
  it('no GitHub token, API token or device code outside credentials.json, even when echoed back', async () => {
    initRepository(world.project, { 'README.md': 'hello\n' });
    taskReplies = byAssistantTurn([
      { toolUses: [{ name: 'run_bash', input: { command: 'env; echo env-printed' } }] },
      { text: 'task finished' },
    ]);
    const handle = await loggedIn(['pending', 'token']);
    queued.push({
      kind: 'error',
      status: 400,
      body: { error: { message: `bad request for Bearer ${COPILOT_TOKEN}` } },
    });
    const texts = [
      (await handle.callText('providers', { check: true })).text,
      (await handle.callText('provider_key', { profile: 'cp' })).text,
      (await handle.callText('delegate', { task: 'fails', profile: 'cp' })).text,
      (await handle.callText('delegate', { task: 'works', profile: 'cp' })).text,
      (await handle.callText('usage', {})).text,
    ];
    expect(texts[2]).toContain('answered HTTP 400: bad request for [redacted]');
    const started = await handle.callText('task_start', { task: 'print env', profile: 'cp' });
    expect(started.isError, started.text).toBe(false);
    const id = taskIdOf(started.text);
    texts.push(started.text, await pollTaskStatus(handle, id, /done|failed|lost|timeout/));
    texts.push((await handle.callText('task_result', { task_id: id })).text);
    texts.push((await handle.callText('task_progress', { task_id: id })).text);
    expect(texts.at(-2)).toContain('task finished');
    const toolResult = chat.requests.find((request) => request.rawBody.includes('env-printed'));
    expect(toolResult?.rawBody).toContain('PATH=');
    const files = readdirSync(world.dataHome, { recursive: true, encoding: 'utf8' })
      .map((name) => join(world.dataHome, name))
      .filter((path) => statSync(path).isFile() && path !== credentialsFile());
    expect(files.some((path) => path.includes('ledger'))).toBe(true);
    expect(files.some((path) => path.includes(join('jobs', id)))).toBe(true);
    const seen = [
      ...texts,
      handle.stderr(),
      ...chat.requests.map((request) => request.rawBody),
      ...files.map((path) => readFileSync(path, 'utf8')),
    ];
    for (const text of seen) {
      for (const secret of [GITHUB_TOKEN, COPILOT_TOKEN, DEVICE_CODE]) {
        expect(text).not.toContain(secret);
      }
    }
  });
});
