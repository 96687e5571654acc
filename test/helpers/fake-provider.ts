import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Usage as each wire format reports it: `input` is OpenAI's `prompt_tokens` (cached and written
 * tokens included) but Anthropic's `input_tokens` (without them); `cacheWrite` is Anthropic's
 * `cache_creation_input_tokens` (of which `cacheWrite1h` went to the 1-hour cache) or OpenAI's
 * `prompt_tokens_details.cache_write_tokens`.
 */
export interface FakeUsage {
  input?: number;
  output?: number;
  cachedInput?: number;
  cacheWrite?: number;
  cacheWrite1h?: number;
  reasoning?: number;
}
export interface FakeToolUse {
  id?: string;
  name: string;
  input: unknown;
}
export interface FakeMessageReply {
  kind?: 'message';
  text?: string;
  thinking?: string;
  /** OpenAI: streamed in `delta.refusal` pieces (`message.refusal` when not streamed). */
  refusal?: string;
  /**
   * Anthropic: content blocks sent first, each whole in its `content_block_start` (as the API
   * streams `redacted_thinking`), e.g. `{ type: 'redacted_thinking', data: '…' }`.
   */
  blocks?: object[];
  toolUses?: FakeToolUse[];
  model?: string;
  stopReason?: string;
  /** Anthropic: `stop_details` beside the stop reason (e.g. a refusal's category and explanation). */
  stopDetails?: object;
  usage?: FakeUsage;
  delayMs?: number;
  chunkDelayMs?: number;
  chunkSize?: number;
  headers?: Record<string, string>;
  /** Destroy the connection after this many SSE events (a stream cut mid-way). */
  cutAfterEvents?: number;
}
export type FakeReply =
  | FakeMessageReply
  | {
      kind: 'error';
      status: number;
      body?: unknown;
      headers?: Record<string, string>;
      delayMs?: number;
    }
  /** Accept the request, send headers, then never write more until closed. */
  | { kind: 'hang' }
  /** Sends `body` as is (e.g. malformed SSE), with status 200 unless given. */
  | { kind: 'raw'; body: string; status?: number; contentType?: string }
  /** Destroy the socket before any response headers. */
  | { kind: 'reset' };
export type WireFormat = 'openai' | 'anthropic';
/** Also `responses`: the OpenAI Responses API (streamed only), which Codex CLI speaks. */
export type FakeWireFormat = WireFormat | 'responses';
export interface RecordedRequest {
  /** Position in `requests` for model calls; -1 for requests to unknown routes. */
  index: number;
  format: FakeWireFormat | 'other';
  method: string;
  /** Path with query string. */
  path: string;
  pathname: string;
  /** Lowercased names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  rawBody: string;
  /** Parsed JSON body, or undefined when the body is not JSON. */
  body: any;
  receivedAt: number;
}
export type Responder =
  FakeReply[] | ((request: RecordedRequest) => FakeReply | Promise<FakeReply>);
export interface FakeProviderOptions {
  respond?: Responder;
  /** Model ids listed by GET /v1/models (or made from that request); default ['fake-model']. */
  models?: string[] | ((request: RecordedRequest) => string[]);
  /**
   * Ollama's `POST /api/show`: each model's `capabilities` (e.g. `['completion', 'tools']`,
   * `['embedding']`). Without it the route is unknown, as on servers other than Ollama.
   */
  capabilities?: Record<string, string[]>;
}
export interface FakeProvider {
  /** http://127.0.0.1:PORT, the Anthropic base URL convention (host root). */
  url: string;
  /** url + '/v1', the OpenAI base URL convention. */
  openaiBaseUrl: string;
  /** Every model call (POST chat/completions or messages), in arrival order. */
  requests: RecordedRequest[];
  /** Requests to unknown routes, and model calls left without a scripted reply. */
  unscripted: RecordedRequest[];
  /** Highest number of model calls being answered at once. */
  maxInFlight: number;
  /** Closes the server and destroys open sockets, hung ones included. */
  close(): Promise<void>;
}

/**
 * Picks the reply from the number of role:"assistant" messages already in the request. Stateless,
 * so retries and parallel subagent calls do not shift the script; other roles (Claude Code sends
 * role:"system" messages) are ignored. A turn beyond the end throws, which the server answers as
 * unscripted.
 */
export function byAssistantTurn(steps: FakeReply[]): (request: RecordedRequest) => FakeReply {
  return (request) => {
    const messages: unknown = request.body?.messages;
    const turn = Array.isArray(messages)
      ? messages.filter((message) => message?.role === 'assistant').length
      : 0;
    const step = steps[turn];
    if (!step) throw new Error(`no scripted reply for assistant turn ${turn}`);
    return step;
  };
}

/** Starts a scripted fake OpenAI + Anthropic provider on 127.0.0.1 with a random port. */
export async function startFakeProvider(options: FakeProviderOptions = {}): Promise<FakeProvider> {
  const listModels = (request: RecordedRequest) =>
    typeof options.models === 'function'
      ? options.models(request)
      : (options.models ?? ['fake-model']);
  const script = Array.isArray(options.respond) ? [...options.respond] : undefined;
  const responder = typeof options.respond === 'function' ? options.respond : undefined;
  const sockets = new Set<Socket>();
  let inFlight = 0;
  let idCounter = 0;
  const nextId = () => ++idCounter;

  async function pickReply(request: RecordedRequest, scripted?: FakeReply) {
    try {
      const reply = responder ? await responder(request) : scripted;
      // Plain JS responders may return nothing; that is a missing script step, not a crash.
      return (
        reply ?? new Error(responder ? 'responder returned no reply' : 'no scripted reply left')
      );
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error));
    }
  }

  async function handleModelCall(
    request: RecordedRequest,
    res: ServerResponse,
    scripted: FakeReply | undefined,
  ): Promise<void> {
    const format = request.format as FakeWireFormat;
    const reply = await pickReply(request, scripted);
    if (reply instanceof Error) {
      provider.unscripted.push(request);
      const message = `fake provider: ${reply.message} (${request.method} ${request.path})`;
      return sendJson(res, 500, errorBody(format, message, 'fake_unscripted'));
    }
    if (reply.kind === 'reset') return void res.socket?.destroy();
    if (reply.kind === 'raw') {
      res.writeHead(reply.status ?? 200, {
        'content-type': reply.contentType ?? 'text/event-stream',
      });
      return void res.end(reply.body);
    }
    if (reply.kind === 'hang') {
      const type = request.body?.stream === true ? 'text/event-stream' : 'application/json';
      res.writeHead(200, { 'content-type': type });
      return res.flushHeaders();
    }
    if (reply.delayMs) await sleep(reply.delayMs);
    if (res.destroyed) return;
    if (reply.kind === 'error') {
      const body = reply.body ?? errorBody(format, `fake error ${reply.status}`);
      return sendJson(res, reply.status, body, reply.headers);
    }
    const built = buildMessage(reply, request, nextId);
    const isStream = request.body?.stream === true || format === 'responses';
    if (!isStream) {
      const body = format === 'openai' ? openaiJson(built) : anthropicJson(built);
      return sendJson(res, 200, body, reply.headers);
    }
    const events =
      format === 'openai'
        ? openaiEvents(built, request.body?.stream_options?.include_usage === true)
        : format === 'responses'
          ? responsesEvents(built)
          : anthropicEvents(built);
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      ...reply.headers,
    });
    for (const [i, event] of events.entries()) {
      if (i > 0 && reply.chunkDelayMs) await sleep(reply.chunkDelayMs);
      if (res.destroyed) return;
      // A connection cut mid-stream, e.g. in the middle of a tool call's JSON.
      if (reply.cutAfterEvents !== undefined && i >= reply.cutAfterEvents) {
        await new Promise<void>((resolve) => res.write('', () => resolve()));
        return void res.socket?.destroy();
      }
      res.write(event);
    }
    res.end();
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const route = `${req.method} ${url.pathname}`;
    const format = modelCallFormat(route);
    if (format) {
      // Counted before the body is read so concurrent uploads already count as in flight.
      inFlight += 1;
      provider.maxInFlight = Math.max(provider.maxInFlight, inFlight);
      res.once('close', () => (inFlight -= 1));
    }
    const request: RecordedRequest = {
      index: format ? provider.requests.length : -1,
      format: format ?? 'other',
      method: req.method ?? 'GET',
      path: url.pathname + url.search,
      pathname: url.pathname,
      headers: flattenHeaders(req),
      rawBody: '',
      body: undefined,
      receivedAt: Date.now(),
    };
    // Recorded and scripted on arrival, not once the body is in, so concurrent uploads of
    // different sizes keep their order.
    const scripted = format ? script?.shift() : undefined;
    if (format) provider.requests.push(request);
    request.rawBody = await readBody(req);
    request.body = parseJson(request.rawBody);
    if (format) return handleModelCall(request, res, scripted);
    if (route === 'GET /v1/models') {
      const data = listModels(request).map((id) => {
        return {
          id,
          object: 'model',
          type: 'model',
          display_name: id,
          created: 0,
          owned_by: 'fake',
        };
      });
      return sendJson(res, 200, { object: 'list', data });
    }
    if (route === 'HEAD /api/hello') return void res.writeHead(200).end();
    const shown = options.capabilities?.[String(request.body?.model)];
    if (route === 'POST /api/show' && shown) return sendJson(res, 200, { capabilities: shown });
    if (route === 'POST /v1/messages/count_tokens')
      return sendJson(res, 200, { input_tokens: 100 });
    provider.unscripted.push(request);
    sendJson(res, 404, errorBody('openai', `fake provider: no route for ${route}`, 'not_found'));
  }

  const server = createServer((req, res) => {
    // A client that disconnects mid-write must not crash the test process.
    res.on('error', () => undefined);
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, errorBody('openai', String(error), 'fake_crash'));
      else res.destroy();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const provider: FakeProvider = {
    url: `http://127.0.0.1:${port}`,
    openaiBaseUrl: `http://127.0.0.1:${port}/v1`,
    requests: [],
    unscripted: [],
    maxInFlight: 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
  return provider;
}

function modelCallFormat(route: string): FakeWireFormat | undefined {
  if (route === 'POST /v1/chat/completions') return 'openai';
  if (route === 'POST /v1/messages') return 'anthropic';
  if (route === 'POST /v1/responses') return 'responses';
  return undefined;
}

/** A message reply with every default resolved, shared by both wire formats. */
type BuiltMessage = ReturnType<typeof buildMessage>;

function buildMessage(reply: FakeMessageReply, request: RecordedRequest, nextId: () => number) {
  const toolPrefix = request.format === 'openai' ? 'call_fake_' : 'toolu_fake_';
  const tools = (reply.toolUses ?? []).map((tool) => {
    const input = tool.input ?? {};
    return {
      id: tool.id ?? `${toolPrefix}${nextId()}`,
      name: tool.name,
      input,
      json: JSON.stringify(input),
    };
  });
  const usage: Required<FakeUsage> = {
    input: reply.usage?.input ?? Math.ceil(request.rawBody.length / 4),
    output: reply.usage?.output ?? Math.ceil((reply.text ?? '').length / 4) + 1,
    cachedInput: reply.usage?.cachedInput ?? 0,
    cacheWrite: reply.usage?.cacheWrite ?? 0,
    cacheWrite1h: reply.usage?.cacheWrite1h ?? 0,
    reasoning: reply.usage?.reasoning ?? 0,
  };
  const requestModel: unknown = request.body?.model;
  const model = reply.model ?? (typeof requestModel === 'string' ? requestModel : 'fake-model');
  const hasTools = tools.length > 0;
  return {
    id: nextId(),
    model,
    text: reply.text,
    thinking: reply.thinking,
    refusal: reply.refusal,
    blocks: reply.blocks ?? [],
    stopDetails: reply.stopDetails,
    tools,
    hasTools,
    usage,
    openaiStop: reply.stopReason ?? (hasTools ? 'tool_calls' : 'stop'),
    anthropicStop: reply.stopReason ?? (hasTools ? 'tool_use' : 'end_turn'),
    split: (text: string | undefined) => split(text, Math.max(1, reply.chunkSize ?? 40)),
  };
}

function openaiUsage({ usage }: BuiltMessage) {
  return {
    prompt_tokens: usage.input,
    completion_tokens: usage.output,
    total_tokens: usage.input + usage.output,
    prompt_tokens_details: {
      cached_tokens: usage.cachedInput,
      ...(usage.cacheWrite ? { cache_write_tokens: usage.cacheWrite } : {}),
    },
    completion_tokens_details: { reasoning_tokens: usage.reasoning },
  };
}

function openaiJson(message: BuiltMessage) {
  const tool_calls = message.tools.map(({ id, name, json }) => {
    return { id, type: 'function', function: { name, arguments: json } };
  });
  const reply = {
    role: 'assistant',
    content: message.text ?? (message.hasTools ? null : ''),
    ...(message.thinking !== undefined && { reasoning_content: message.thinking }),
    ...(message.refusal !== undefined && { refusal: message.refusal }),
    ...(message.hasTools && { tool_calls }),
  };
  const choice = { index: 0, message: reply, finish_reason: message.openaiStop };
  const head = { id: `chatcmpl-fake-${message.id}`, object: 'chat.completion', created: 0 };
  return { ...head, model: message.model, choices: [choice], usage: openaiUsage(message) };
}

function openaiEvents(message: BuiltMessage, includeUsage: boolean): string[] {
  const head = { id: `chatcmpl-fake-${message.id}`, object: 'chat.completion.chunk', created: 0 };
  const data = (fields: object) =>
    `data: ${JSON.stringify({ ...head, model: message.model, ...fields })}\n\n`;
  const chunk = (delta: object, finish_reason: string | null = null) =>
    data({ choices: [{ index: 0, delta, finish_reason }] });
  const events = [chunk({ role: 'assistant', content: '' })];
  for (const part of message.split(message.thinking))
    events.push(chunk({ reasoning_content: part }));
  for (const part of message.split(message.text)) events.push(chunk({ content: part }));
  for (const part of message.split(message.refusal)) events.push(chunk({ refusal: part }));
  for (const [index, { id, name, json }] of message.tools.entries()) {
    const [first = '', ...rest] = message.split(json);
    events.push(
      chunk({
        tool_calls: [{ index, id, type: 'function', function: { name, arguments: first } }],
      }),
    );
    for (const part of rest)
      events.push(chunk({ tool_calls: [{ index, function: { arguments: part } }] }));
  }
  events.push(chunk({}, message.openaiStop));
  if (includeUsage) events.push(data({ choices: [], usage: openaiUsage(message) }));
  return [...events, 'data: [DONE]\n\n'];
}

function anthropicJson(message: BuiltMessage) {
  const content: object[] = [...message.blocks];
  if (message.thinking !== undefined) {
    content.push({ type: 'thinking', thinking: message.thinking, signature: 'fake-signature' });
  }
  if (message.text !== undefined || !message.hasTools) {
    content.push({ type: 'text', text: message.text ?? '' });
  }
  for (const { id, name, input } of message.tools)
    content.push({ type: 'tool_use', id, name, input });
  const { input, output, cachedInput, cacheWrite, cacheWrite1h } = message.usage;
  return {
    id: `msg_fake_${message.id}`,
    type: 'message',
    role: 'assistant',
    model: message.model,
    content,
    stop_reason: message.anthropicStop,
    stop_sequence: null,
    ...(message.stopDetails && { stop_details: message.stopDetails }),
    usage: {
      input_tokens: input,
      output_tokens: output,
      cache_read_input_tokens: cachedInput,
      cache_creation_input_tokens: cacheWrite,
      cache_creation: {
        ephemeral_5m_input_tokens: cacheWrite - cacheWrite1h,
        ephemeral_1h_input_tokens: cacheWrite1h,
      },
    },
  };
}

function anthropicEvents(message: BuiltMessage): string[] {
  const event = (type: string, fields: object = {}) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`;
  const final = anthropicJson(message);
  const { stop_details: stopDetails, ...rest } = final;
  const start = {
    ...rest,
    content: [],
    stop_reason: null,
    usage: { ...final.usage, output_tokens: 1 },
  };
  const events = [event('message_start', { message: start }), event('ping')];
  let index = 0;
  const block = (content_block: object, deltas: object[]) => {
    events.push(event('content_block_start', { index, content_block }));
    for (const delta of deltas) events.push(event('content_block_delta', { index, delta }));
    events.push(event('content_block_stop', { index: index++ }));
  };
  for (const whole of message.blocks) block(whole, []);
  if (message.thinking !== undefined) {
    const deltas = message
      .split(message.thinking)
      .map((thinking) => ({ type: 'thinking_delta', thinking }));
    const signature = { type: 'signature_delta', signature: 'fake-signature' };
    block({ type: 'thinking', thinking: '', signature: '' }, [...deltas, signature]);
  }
  if (message.text !== undefined || !message.hasTools) {
    block(
      { type: 'text', text: '' },
      message.split(message.text).map((text) => ({ type: 'text_delta', text })),
    );
  }
  for (const { id, name, json } of message.tools) {
    const deltas = message
      .split(json)
      .map((partial_json) => ({ type: 'input_json_delta', partial_json }));
    block({ type: 'tool_use', id, name, input: {} }, deltas);
  }
  const delta = {
    stop_reason: message.anthropicStop,
    stop_sequence: null,
    ...(stopDetails && { stop_details: stopDetails }),
  };
  events.push(event('message_delta', { delta, usage: { output_tokens: message.usage.output } }));
  return [...events, event('message_stop')];
}

/** Responses API SSE: each output item whole (text message, function calls), then the usage. */
function responsesEvents(message: BuiltMessage): string[] {
  const event = (type: string, fields: object = {}) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`;
  const id = `resp_fake_${message.id}`;
  const events = [event('response.created', { response: { id } })];
  let index = 0;
  const item = (fields: object) =>
    events.push(event('response.output_item.done', { output_index: index++, item: fields }));
  if (message.text !== undefined || !message.hasTools) {
    item({
      type: 'message',
      id: `msg_fake_${message.id}`,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: message.text ?? '', annotations: [] }],
    });
  }
  for (const { id: callId, name, json } of message.tools) {
    item({ type: 'function_call', id: `fc_${callId}`, call_id: callId, name, arguments: json });
  }
  const { input, output, cachedInput, reasoning } = message.usage;
  const usage = {
    input_tokens: input,
    input_tokens_details: { cached_tokens: cachedInput },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: reasoning },
    total_tokens: input + output,
  };
  events.push(event('response.completed', { response: { id, usage } }));
  return events;
}

function split(text: string | undefined, size: number): string[] {
  const parts: string[] = [];
  for (let i = 0; text && i < text.length; i += size) parts.push(text.slice(i, i + size));
  return parts;
}

function errorBody(format: FakeWireFormat, message: string, type?: string) {
  return format === 'anthropic'
    ? { type: 'error', error: { type: type ?? 'api_error', message } }
    : format === 'responses'
      ? { error: { type: type ?? 'fake_error', code: type ?? 'fake_error', message } }
      : { error: { type: type ?? 'fake_error', message } };
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers = {}): void {
  if (res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function flattenHeaders(req: IncomingMessage): Record<string, string> {
  const entries = Object.entries(req.headers).map(([name, value]) => {
    return [name.toLowerCase(), Array.isArray(value) ? value.join(', ') : (value ?? '')];
  });
  return Object.fromEntries(entries) as Record<string, string>;
}
