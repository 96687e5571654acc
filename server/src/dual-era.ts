import type {
  Transport,
  TransportSendOptions,
} from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';
import type { CallTasks } from './call-tasks.ts';
import { asTask, CACHE_HINT, modernResult } from './modern-result.ts';
import { checkInbound } from './request-check.ts';
import { guardTool, type ServerDependencies } from './server.ts';
import { argumentSchema, type ToolDefinition } from './tools/define-tool.ts';
import { TaskRequestError, type NativeTask, type TaskDoor } from './tools/task-door.ts';
import type { TaskStartInput } from './tools/task-start.ts';

/**
 * Serves both protocol eras on one stdio connection, in front of the SDK 1.32 server (which
 * speaks only the 2025 era). A legacy client (`initialize`) reaches the SDK untouched. A modern
 * client (protocol 2026-07-28: no handshake, `_meta` on every request) is answered here for
 * `server/discover` and the tasks extension's `tasks/*`. When a request declares the extension,
 * its `task_start` becomes a task on the job store (`tools/task-door.ts`), and the tools that
 * may run long or ask the user (`nativeTask: 'call'`) run here and become a task when they do
 * (`call-tasks.ts`). Everything else goes to the SDK, and its result gets the `resultType` and
 * `serverInfo` the modern era requires (`modern-result.ts`). Every inbound line is checked first
 * (`request-check.ts`): a malformed request, in either era, is answered with an error. Why this
 * and not SDK v2: docs/design/native-mcp-tasks.md §3.
 */

export const MODERN_VERSION = '2026-07-28';
export const LEGACY_VERSION = '2025-11-25';
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
const VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
const CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';

const INVALID_PARAMS = -32602;
const UNSUPPORTED_VERSION = -32022;
const MISSING_CAPABILITY = -32021;
const INTERNAL_ERROR = -32603;

/** A JSON-RPC message as the wrapper reads it (any of request, notification, response). */
interface Message {
  jsonrpc: '2.0';
  id?: string | number;
  method?: string;
  params?: { _meta?: Record<string, unknown>; [key: string]: unknown };
  result?: Record<string, unknown>;
  error?: unknown;
}

export interface DualEraDependencies extends Pick<ServerDependencies, 'context' | 'log'> {
  version: string;
  instructions: string;
  /** The task door (created lazily by the caller: nothing heavy loads before the first call). */
  door: TaskDoor;
  /** Tool calls as tasks; `tools` are the ones it may run (those with `nativeTask`). */
  calls: CallTasks;
  tools: readonly ToolDefinition[];
}

/**
 * Wraps `inner` (the stdio transport, which hands on every line unchecked: `stdio-lines.ts`) so
 * that the SDK server behind it serves both eras.
 */
export function dualEraTransport(inner: Transport, dependencies: DualEraDependencies): Transport {
  /** Modern requests passed to the SDK, by id, with their method: their results get reshaped. */
  const modernIds = new Map<string | number, string>();
  const outer: Transport = {
    start: () => inner.start(),
    close: () => inner.close(),
    send: (message: JSONRPCMessage, options?: TransportSendOptions) => {
      const reply = message as Message;
      const method = reply.id === undefined ? undefined : modernIds.get(reply.id);
      if (reply.method === undefined && method !== undefined) {
        modernIds.delete(reply.id!);
        if (reply.result)
          message = {
            ...message,
            result: modernResult(reply.result, dependencies.version, method),
          };
      }
      return inner.send(message, options);
    },
    setProtocolVersion: (version: string) => inner.setProtocolVersion?.(version),
  };
  inner.onclose = () => outer.onclose?.();
  inner.onerror = (error) => outer.onerror?.(error);
  inner.onmessage = (raw: JSONRPCMessage, extra?: MessageExtraInfo) => {
    const checked = checkInbound(raw);
    if (checked.kind === 'answer') return void inner.send(checked.reply).catch(() => undefined);
    if (checked.kind === 'drop') return dependencies.log(`ignored ${checked.reason}`);
    const message = checked.message as Message;
    const handled = handleModern(message, dependencies, (answer) => inner.send(answer));
    if (handled === 'pass-modern') modernIds.set(message.id!, message.method!);
    if (handled !== 'handled') outer.onmessage?.(checked.message, extra);
  };
  return outer;
}

type Verdict = 'handled' | 'pass' | 'pass-modern';

/** What the wrapper does with one inbound message; answers the ones it handles itself. */
function handleModern(
  message: Message,
  dependencies: DualEraDependencies,
  send: (answer: JSONRPCMessage) => Promise<void>,
): Verdict {
  const { id, method } = message;
  // A call run here may be cancelled before it is a task; the SDK's own calls hear it too.
  if (method === 'notifications/cancelled')
    dependencies.calls.abortRequest(message.params?.requestId);
  // Responses, notifications and legacy requests are the SDK's.
  if (id === undefined || method === undefined) return 'pass';
  const reply = (result: Record<string, unknown>) =>
    void send({
      jsonrpc: '2.0',
      id,
      result: modernResult(result, dependencies.version),
    }).catch(() => undefined);
  const fail = (code: number, text: string, data?: unknown) =>
    void send({
      jsonrpc: '2.0',
      id,
      error: { code, message: text, ...(data === undefined ? {} : { data }) },
    }).catch(() => undefined);
  // Answered at once, whatever the era: Claude Code waits 3 s for it before falling back.
  if (method === 'server/discover') {
    reply(discoverResult(dependencies));
    return 'handled';
  }
  const meta = message.params?._meta ?? {};
  const version = meta[VERSION_KEY];
  if (version === undefined) return 'pass';
  if (version !== MODERN_VERSION) {
    fail(UNSUPPORTED_VERSION, 'Unsupported protocol version', {
      supported: [MODERN_VERSION, LEGACY_VERSION],
      requested: version,
    });
    return 'handled';
  }
  if (typeof meta[CAPABILITIES_KEY] !== 'object' || meta[CAPABILITIES_KEY] === null) {
    fail(INVALID_PARAMS, `Invalid params: _meta["${CAPABILITIES_KEY}"] is required`);
    return 'handled';
  }
  const capabilities = meta[CAPABILITIES_KEY] as { extensions?: Record<string, unknown> };
  const hasTasks = capabilities.extensions?.[TASKS_EXTENSION] !== undefined;
  if (method.startsWith('tasks/')) {
    if (!hasTasks) {
      fail(MISSING_CAPABILITY, 'Missing required client capability', {
        requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
      });
      return 'handled';
    }
    void taskMethod(method, message.params ?? {}, dependencies).then(
      (result) => (result ? reply(result) : fail(-32601, `Method not found: ${method}`)),
      (error: unknown) => answerError(error, fail, dependencies, method),
    );
    return 'handled';
  }
  const tool =
    method === 'tools/call' && hasTasks
      ? dependencies.tools.find((one) => one.nativeTask && one.name === message.params?.name)
      : undefined;
  if (tool) {
    const parsed = argumentSchema(tool).safeParse(message.params?.arguments ?? {});
    // Bad arguments: the SDK answers with today's validation error.
    if (!parsed.success) return 'pass-modern';
    if (tool.nativeTask === 'job') {
      void startAsTask(parsed.data as TaskStartInput, dependencies).then(reply, (error: unknown) =>
        answerError(error, fail, dependencies, method),
      );
      return 'handled';
    }
    const progressToken = (meta as { progressToken?: string | number }).progressToken;
    let answered = false;
    const progress = async (text: string, progress: number, total?: number) => {
      if (answered || progressToken === undefined) return;
      await send({
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: {
          progressToken,
          progress,
          message: text,
          ...(total === undefined ? {} : { total }),
        },
      }).catch(() => undefined);
    };
    void dependencies.calls.run(tool, parsed.data, { id, progress }).then(
      (outcome) => {
        answered = true;
        reply('result' in outcome ? { ...outcome.result } : asTask(outcome.task, outcome.text));
      },
      (error: unknown) => answerError(error, fail, dependencies, method),
    );
    return 'handled';
  }
  return 'pass-modern';
}

/** The `DiscoverResult`: both eras, tools and the tasks extension. */
function discoverResult({ instructions }: DualEraDependencies): Record<string, unknown> {
  return {
    supportedVersions: [MODERN_VERSION, LEGACY_VERSION],
    capabilities: { tools: {}, extensions: { [TASKS_EXTENSION]: {} } },
    instructions,
    ...CACHE_HINT,
  };
}

/**
 * task_start as a task: a `CreateTaskResult` once the job exists (a `tasks/get` resolves), with
 * task_start's own text for the model (it names the job id for task_status and friends); a
 * start that fails answers with today's error result instead.
 */
async function startAsTask(
  input: TaskStartInput,
  dependencies: DualEraDependencies,
): Promise<Record<string, unknown>> {
  let task: Awaited<ReturnType<TaskDoor['start']>>['task'] | undefined;
  const call = { signal: new AbortController().signal, reportProgress: () => Promise.resolve() };
  const result = await guardTool(
    'task_start',
    async () => {
      // A task is waited on by the client: task_start's inline wait would only hold the answer.
      const started = await dependencies.door.start({ ...input, wait_s: undefined }, call);
      task = started.task;
      return started.text;
    },
    dependencies,
  );
  if (!task) return result;
  const text = result.content[0]?.type === 'text' ? result.content[0].text : '';
  return asTask(task, text);
}

/**
 * `tasks/get`, `tasks/update`, `tasks/cancel` for a job (task_start) or a call run as a task;
 * undefined for another `tasks/` method.
 */
async function taskMethod(
  method: string,
  params: Record<string, unknown>,
  { door, calls }: DualEraDependencies,
): Promise<Record<string, unknown> | undefined> {
  // Both answer for their own tasks the same way; only where the task lives differs.
  const tasks: {
    get(taskId: unknown): NativeTask | Promise<NativeTask>;
    update(taskId: unknown, inputResponses: unknown): void | Promise<void>;
    cancel(taskId: unknown): Promise<void>;
  } = calls.owns(params.taskId) ? calls : door;
  switch (method) {
    case 'tasks/get':
      return { ...(await tasks.get(params.taskId)) };
    case 'tasks/update':
      await tasks.update(params.taskId, params.inputResponses);
      return {};
    case 'tasks/cancel':
      await tasks.cancel(params.taskId);
      return {};
    default:
      return undefined;
  }
}

function answerError(
  error: unknown,
  fail: (code: number, text: string) => void,
  { log }: DualEraDependencies,
  method: string,
): void {
  if (error instanceof TaskRequestError) return fail(error.code, error.message);
  log(`${method} failed unexpectedly: ${(error as Error).stack ?? String(error)}`);
  fail(INTERNAL_ERROR, `${method} failed: ${(error as Error).message}`);
}
