import {
  ClientRequestSchema,
  JSONRPCMessageSchema,
  RequestIdSchema,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

/**
 * The one place every inbound line is checked, whatever its era and whoever answers it (the
 * dual-era wrapper or the SDK behind it): a request is either made well-formed for them or
 * answered here with a JSON-RPC error a person can read, never dropped and never a schema dump.
 *
 * - Not an object (or a batch), no string `method`, no `jsonrpc: "2.0"`, an `id` that is not a
 *   string or integer, `params` that is not a structured value: -32600 Invalid Request.
 * - `params` by position (an array), `_meta` not an object, or params that break the method's
 *   schema (the spec's, for every method the SDK knows; the tasks extension's for `tasks/*`):
 *   -32602 Invalid params.
 * - `task` metadata (2025-11-25 task augmentation) is dropped: this server declares no task
 *   support in that era, and the spec says such a receiver serves the request as usual.
 *
 * A malformed notification cannot be answered; it is dropped with a reason for the log.
 */

const INVALID_REQUEST = -32600;
const INVALID_PARAMS = -32602;

export type Checked =
  | { kind: 'pass'; message: JSONRPCMessage }
  | { kind: 'answer'; reply: JSONRPCMessage }
  | { kind: 'drop'; reason: string };

/** The extension's requests (protocol 2026-07-28), which the SDK 1.32 schemas do not know. */
const taskId = z.string();
const TASK_PARAMS: Record<string, z.ZodType> = {
  'tasks/get': z.looseObject({ taskId }),
  'tasks/cancel': z.looseObject({ taskId }),
  'tasks/update': z.looseObject({
    taskId,
    inputResponses: z.record(z.string(), z.looseObject({})),
  }),
};

/** Each known method's params schema: the spec's (via the SDK), then the extension's. */
const PARAMS_BY_METHOD = new Map<string, z.ZodType>([
  ...ClientRequestSchema.options.map(
    (option) => [option.shape.method.value, option.shape.params] as [string, z.ZodType],
  ),
  ...Object.entries(TASK_PARAMS),
]);

export function checkInbound(value: unknown): Checked {
  if (!isObject(value)) {
    const what = Array.isArray(value) ? 'batches are not supported' : 'not a JSON-RPC message';
    return answer(null, INVALID_REQUEST, `Invalid request: ${what}`);
  }
  if (value.method === undefined) return passResponse(value);
  const hasId = value.id !== undefined;
  const id = RequestIdSchema.safeParse(value.id).success ? (value.id as string | number) : null;
  const problem = envelopeProblem(value, hasId && id === null);
  if (problem) {
    if (!hasId) return { kind: 'drop', reason: `a malformed notification: ${problem.text}` };
    return answer(id, problem.code, problem.text);
  }
  const method = value.method as string;
  const params = withoutTaskMetadata(value.params as Record<string, unknown> | undefined);
  const schema = PARAMS_BY_METHOD.get(method);
  const parsed = hasId && schema ? schema.safeParse(params) : undefined;
  if (parsed && !parsed.success)
    return answer(id, INVALID_PARAMS, `Invalid params for ${method}: ${describe(parsed.error)}`);
  // Exactly the fields JSON-RPC names: the SDK refuses a request with any other.
  const message = {
    jsonrpc: '2.0',
    ...(hasId ? { id } : {}),
    method,
    ...(params === undefined ? {} : { params }),
  };
  const gate = JSONRPCMessageSchema.safeParse(message);
  if (gate.success) return { kind: 'pass', message: message as JSONRPCMessage };
  if (!hasId) return { kind: 'drop', reason: `a malformed notification: ${describe(gate.error)}` };
  return answer(id, INVALID_REQUEST, `Invalid request: ${describe(gate.error)}`);
}

function envelopeProblem(
  value: Record<string, unknown>,
  hasBadId: boolean,
): { code: number; text: string } | undefined {
  const invalid = (text: string) => ({ code: INVALID_REQUEST, text: `Invalid request: ${text}` });
  if (value.jsonrpc !== '2.0') return invalid('jsonrpc must be "2.0"');
  if (typeof value.method !== 'string') return invalid('method must be a string');
  if (hasBadId) return invalid('id must be a string or an integer');
  const { params } = value;
  if (params === undefined || isObject(params)) {
    const meta = (params as { _meta?: unknown } | undefined)?._meta;
    if (meta === undefined || isObject(meta)) return undefined;
    return { code: INVALID_PARAMS, text: 'Invalid params: _meta must be an object' };
  }
  if (Array.isArray(params))
    return { code: INVALID_PARAMS, text: 'Invalid params: params must be an object, not an array' };
  return invalid(`params must be an object, not ${params === null ? 'null' : typeof params}`);
}

/** A response from the client (to a form, a ping): the SDK's to judge; a reply-less one is void. */
function passResponse(value: Record<string, unknown>): Checked {
  if (JSONRPCMessageSchema.safeParse(value).success)
    return { kind: 'pass', message: value as JSONRPCMessage };
  return answer(null, INVALID_REQUEST, 'Invalid request: no method, and not a response');
}

function withoutTaskMetadata(
  params: Record<string, unknown> | undefined,
): Record<string, unknown> | undefined {
  if (params?.task === undefined) return params;
  const rest = { ...params };
  delete rest.task;
  return rest;
}

/** The first few problems, each as `where: what` (`name is missing`), in one line. */
function describe(error: z.ZodError): string {
  const lines = error.issues.slice(0, 3).map((issue) => {
    const where = issue.path.map(String).join('.') || 'params';
    if (issue.message.endsWith('received undefined')) return `${where} is missing`;
    return `${where}: ${issue.message.replace(/^Invalid input: /, '')}`;
  });
  const more = error.issues.length - lines.length;
  return lines.join('; ') + (more > 0 ? ` (and ${more} more)` : '');
}

function answer(id: string | number | null, code: number, message: string): Checked {
  return {
    kind: 'answer',
    reply: { jsonrpc: '2.0', id, error: { code, message } } as unknown as JSONRPCMessage,
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
