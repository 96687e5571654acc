import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { runTool, type ServerDependencies } from './server.ts';
import {
  userQuestionForm,
  type Services,
  type ToolCall,
  type ToolDefinition,
  type UserAnswer,
  type UserForm,
} from './tools/define-tool.ts';
import { TaskRequestError, type InputResponse, type NativeTask } from './tools/task-door.ts';

/**
 * Tool calls as native tasks (the MCP tasks extension), for the tools that may run long or ask
 * the user (`nativeTask: 'call'`): the call runs in this server as it would for the plain door; if it
 * ends within `afterMs` the client gets its result as usual, and if it is still running then, or
 * asks the user anything, the client gets a task instead, which it polls (`tasks/get`), answers
 * (`tasks/update`: the question is a form) and stops (`tasks/cancel`: the call's signal).
 *
 * Unlike `task_start`'s jobs these live in memory: a call runs inside this server and ends with
 * it, so after a restart its task is unknown (the error says to run the call again). An ended
 * call's result is kept for `KEEP_ENDED_MS`.
 */

/** How long an ended call's result stays readable. */
const KEEP_ENDED_MS = 60 * 60_000;
/** How long `tasks/cancel` waits for the call to unwind before it answers. */
const CANCEL_WAIT_MS = 5_000;
const ID_PREFIX = 'c_';

interface CallRecord {
  id: string;
  createdAt: string;
  updatedAt: string;
  statusMessage: string;
  controller: AbortController;
  /** The question shown as a form, until its answer arrives. */
  question?: { key: string; form: UserForm; answer: (answer: UserAnswer) => void };
  asked: number;
  outcome?: CallToolResult;
  cancelled?: boolean;
  /** Settles when the tool's handler has returned. */
  ended: Promise<void>;
}

export interface CallTaskDependencies extends Pick<ServerDependencies, 'context' | 'log'> {
  services: () => Promise<Services>;
  /** How long a call runs before it becomes a task. */
  afterMs: number;
  pollIntervalMs: number;
}

export type CallOutcome = { result: CallToolResult } | { task: NativeTask; text: string };

export interface CallTasks {
  /** Runs the tool; its result if it ends within `afterMs` without asking the user, else a task. */
  run(
    tool: ToolDefinition,
    input: unknown,
    request: { id: unknown; progress: ToolCall['reportProgress'] },
  ): Promise<CallOutcome>;
  /** Whether `taskId` names a call task (of this server, or of one that has restarted). */
  owns(taskId: unknown): boolean;
  get(taskId: unknown): NativeTask;
  update(taskId: unknown, inputResponses: unknown): void;
  cancel(taskId: unknown): Promise<void>;
  /** `notifications/cancelled` for a call still inside its first `afterMs`. */
  abortRequest(requestId: unknown): void;
}

export function createCallTasks(dependencies: CallTaskDependencies): CallTasks {
  const records = new Map<string, CallRecord>();
  /** Calls inside their first `afterMs`, by JSON-RPC request id, for `notifications/cancelled`. */
  const byRequest = new Map<unknown, AbortController>();

  function touch(record: CallRecord): void {
    record.updatedAt = dependencies.context.now().toISOString();
  }

  function find(taskId: unknown): CallRecord {
    const record = typeof taskId === 'string' ? records.get(taskId) : undefined;
    if (!record) {
      throw new TaskRequestError(
        -32602,
        `Unknown task ${String(taskId)}: a delegate or provider_key call runs inside the MCP server and ends with it, and this server has restarted since (or the call ended over an hour ago). Make the call again.`,
      );
    }
    return record;
  }

  /** The fields every state shares. */
  function shape(record: CallRecord) {
    return {
      taskId: record.id,
      statusMessage: record.statusMessage,
      createdAt: record.createdAt,
      lastUpdatedAt: record.updatedAt,
      ttlMs: null,
      pollIntervalMs: dependencies.pollIntervalMs,
    };
  }

  function describe(record: CallRecord): NativeTask {
    const base = shape(record);
    if (record.cancelled) return { ...base, status: 'cancelled' };
    if (record.outcome) {
      const content = record.outcome.content.flatMap((part) =>
        part.type === 'text' ? [{ type: 'text' as const, text: part.text }] : [],
      );
      return {
        ...base,
        status: 'completed',
        result: { content, isError: record.outcome.isError === true },
      };
    }
    if (record.question) {
      return {
        ...base,
        status: 'input_required',
        inputRequests: {
          [record.question.key]: { method: 'elicitation/create', params: record.question.form },
        },
      };
    }
    return { ...base, status: 'working' };
  }

  return {
    async run(tool, input, request) {
      const now = dependencies.context.now().toISOString();
      let becameTask!: () => void;
      const askedUser = new Promise<void>((resolve) => (becameTask = resolve));
      const record: CallRecord = {
        // Web Crypto, not node:crypto: importing that module costs every server start ~3 ms.
        id:
          ID_PREFIX + Buffer.from(crypto.getRandomValues(new Uint8Array(12))).toString('base64url'),
        createdAt: now,
        updatedAt: now,
        statusMessage: `${tool.name} is running`,
        controller: new AbortController(),
        asked: 0,
        ended: Promise.resolve(),
      };
      const call: ToolCall = {
        signal: record.controller.signal,
        reportProgress: async (message, done, total) => {
          record.statusMessage = message;
          touch(record);
          await request.progress(message, done, total);
        },
        askUser: (question) =>
          new Promise<UserAnswer>((resolve) => {
            if (record.controller.signal.aborted) return resolve({ action: 'cancel' });
            record.asked += 1;
            record.question = {
              key: `${record.id}.q${record.asked}`,
              form: userQuestionForm(question),
              answer: resolve,
            };
            record.statusMessage = `${tool.name} is waiting for the user's answer`;
            touch(record);
            becameTask();
          }),
      };
      record.ended = runTool(tool, input, dependencies, dependencies.services, call).then(
        (result) => {
          record.outcome = result;
          touch(record);
          setTimeout(() => records.delete(record.id), KEEP_ENDED_MS).unref();
        },
      );
      byRequest.set(request.id, record.controller);
      await within(dependencies.afterMs, Promise.race([record.ended, askedUser]));
      byRequest.delete(request.id);
      if (record.outcome) return { result: record.outcome };
      records.set(record.id, record);
      // Created as working: the first tasks/get (Claude Code polls at once) shows a question.
      const task: NativeTask = { ...shape(record), status: 'working' };
      const text = record.question
        ? `${tool.name} is waiting for the user: Claude Code shows them its form. It runs as background task ${record.id}; its result arrives when they answer. Do not call it again meanwhile.`
        : `${tool.name} is taking a while, so it runs as background task ${record.id}; its result arrives when it ends. Carry on meanwhile; do not call it again.`;
      return { task, text };
    },

    owns: (taskId) => typeof taskId === 'string' && taskId.startsWith(ID_PREFIX),

    get: (taskId) => describe(find(taskId)),

    update(taskId, inputResponses) {
      const record = find(taskId);
      const question = record.question;
      const response = question
        ? (inputResponses as Record<string, InputResponse> | undefined)?.[question.key]
        : undefined;
      // Keys that are not outstanding (answered already, or never asked) are ignored.
      if (!question || !response) return;
      record.question = undefined;
      record.statusMessage = 'the user answered; the call goes on';
      touch(record);
      const value = response.content?.value;
      question.answer(
        response.action === 'accept' && typeof value === 'string'
          ? { action: 'accept', value }
          : { action: response.action === 'cancel' ? 'cancel' : 'decline' },
      );
    },

    async cancel(taskId) {
      const record = find(taskId);
      if (!record.outcome) {
        record.cancelled = true;
        record.statusMessage = 'cancelled';
        touch(record);
        record.controller.abort();
        record.question?.answer({ action: 'cancel' });
        record.question = undefined;
      }
      await within(CANCEL_WAIT_MS, record.ended);
    },

    abortRequest(requestId) {
      byRequest.get(requestId)?.abort();
    },
  };
}

/** Waits for `settled`, but `ms` at most (a stop answers even when a call hangs). */
async function within(ms: number, settled: Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([settled, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
