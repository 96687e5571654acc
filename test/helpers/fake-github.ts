import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A fake of the GitHub endpoints a Copilot login uses, on 127.0.0.1: the device flow on
 * github.com (`POST /login/device/code`, `POST /login/oauth/access_token`, answering 200 with an
 * `error` while waiting, as GitHub does) and the Copilot token endpoint on api.github.com
 * (`GET /copilot_internal/v2/token`). Every request is recorded with its arrival time; unknown
 * routes are recorded as unscripted and answered 404.
 */
export type PollReply =
  'pending' | 'slow_down' | 'expired' | 'denied' | 'token' | { error: string; interval?: number };

export interface GitHubRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: any;
  at: number;
}

export interface FakeGitHubOptions {
  /** Answers to successive polls of the access-token endpoint; the last one repeats. */
  polls: PollReply[];
  intervalS?: number;
  expiresInS?: number;
  /** The Copilot chat API GitHub names in `endpoints.api`. */
  chatApi?: string;
}

export interface FakeGitHub {
  url: string;
  requests: GitHubRequest[];
  unscripted: GitHubRequest[];
  /** Requests to one route (`POST /login/oauth/access_token`, …). */
  to(route: string): GitHubRequest[];
  /** Changeable mid-test: what the token endpoint answers. */
  exchange: {
    status: number;
    /** Tokens handed out in turn (the last repeats). */
    tokens: string[];
    /** Seconds until `expires_at`, and GitHub's `refresh_in`. */
    lifetimeS: number;
    refreshInS: number;
  };
  close(): Promise<void>;
}

export const DEVICE_CODE = 'dc-canary-3e8a1f6b9c2d4e7f0a5b';
export const USER_CODE = 'WDJB-MJHT';
export const GITHUB_TOKEN = 'gho_canaryGitHubToken7c1e9a4b2d6f8';
export const CLIENT_ID = 'Iv1.b507a08c87ecfe98';

export async function startFakeGitHub(options: FakeGitHubOptions): Promise<FakeGitHub> {
  const polls = [...options.polls];
  const sockets = new Set<Socket>();
  let issued = 0;
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const pollReply = (request: GitHubRequest): unknown => {
    if (request.body?.client_id !== CLIENT_ID) return { error: 'incorrect_client_credentials' };
    if (request.body?.device_code !== DEVICE_CODE) return { error: 'incorrect_device_code' };
    const reply = (polls.length > 1 ? polls.shift() : polls[0]) ?? 'pending';
    if (typeof reply === 'object') return reply;
    if (reply === 'token') return { access_token: GITHUB_TOKEN, token_type: 'bearer', scope: '' };
    const errors = {
      pending: 'authorization_pending',
      expired: 'expired_token',
      denied: 'access_denied',
    };
    return reply === 'slow_down' ? { error: 'slow_down' } : { error: errors[reply] };
  };
  const tokenReply = (request: GitHubRequest, res: ServerResponse) => {
    const { status, tokens, lifetimeS, refreshInS } = github.exchange;
    if (request.headers.authorization !== `token ${GITHUB_TOKEN}`) {
      return json(res, 401, { message: 'Bad credentials' });
    }
    if (status !== 200) return json(res, status, { message: `fake refusal ${status}` });
    const token = tokens[Math.min(issued++, tokens.length - 1)];
    json(res, 200, {
      token,
      expires_at: Math.floor(Date.now() / 1000) + lifetimeS,
      refresh_in: refreshInS,
      ...(options.chatApi ? { endpoints: { api: options.chatApi } } : {}),
    });
  };
  const server = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const text = Buffer.concat(chunks).toString('utf8');
      const request: GitHubRequest = {
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        headers: Object.fromEntries(
          Object.entries(req.headers).map(([name, value]) => [name, String(value)]),
        ),
        body: text ? safeJson(text) : undefined,
        at: Date.now(),
      };
      github.requests.push(request);
      const route = `${request.method} ${request.path}`;
      if (route === 'POST /login/device/code') {
        return json(res, 200, {
          device_code: DEVICE_CODE,
          user_code: USER_CODE,
          verification_uri: `${github.url}/login/device`,
          expires_in: options.expiresInS ?? 900,
          interval: options.intervalS ?? 1,
        });
      }
      if (route === 'POST /login/oauth/access_token') return json(res, 200, pollReply(request));
      if (route === 'GET /copilot_internal/v2/token') return tokenReply(request, res);
      github.unscripted.push(request);
      json(res, 404, { message: `fake github: no route ${route}` });
    })();
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const github: FakeGitHub = {
    url: `http://127.0.0.1:${port}`,
    requests: [],
    unscripted: [],
    to: (route) => github.requests.filter((r) => `${r.method} ${r.path}` === route),
    exchange: {
      status: 200,
      tokens: ['cop-canary-token-1a2b3c4d5e'],
      lifetimeS: 1800,
      refreshInS: 1500,
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
  return github;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Environment pointing a server or CLI at the fake GitHub. */
export function githubEnv(github: FakeGitHub): Record<string, string> {
  return { DELEGATE_GITHUB_URL_FOR_TEST: github.url, DELEGATE_GITHUB_API_URL_FOR_TEST: github.url };
}
