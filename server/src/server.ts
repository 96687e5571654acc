import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type {
  CallToolResult,
  ListToolsResult,
  ServerNotification,
  ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { AppContext } from './profiles/app-context.ts';
import type {
  Services,
  ToolCall,
  ToolDefinition,
  UserAnswer,
  UserQuestion,
} from './tools/define-tool.ts';
import { argumentSchema, userQuestionForm } from './tools/define-tool.ts';
import type { HookTool } from './tools/hook-answer.ts';
import { describeFileSystemError } from './util/file-system-error.ts';
import { UserError } from './util/user-error.ts';

export const SERVER_NAME = 'delegate-workers';

export const INSTRUCTIONS =
  'Hands work to cheaper, faster or private worker models. Instead of reading a big file ' +
  '(logs, dumps, generated code) into your context, call delegate with files: the server reads ' +
  'them from disk and you get only the answer. Call providers to see the workers.';

export interface ServerDependencies {
  context: AppContext;
  tools: readonly ToolDefinition[];
  /** Tools only hooks call: listed for apps, never shown to the model (see `HIDDEN_FROM_MODEL`). */
  hookTools?: readonly HookTool[];
  /**
   * Loads what the handlers run (`tools/services.ts`, imported dynamically by the entry); called
   * once, at the first tool call, so `initialize` and `tools/list` stay light.
   */
  loadServices: () => Promise<Services>;
  version: string;
  /**
   * The `tools/list` answer computed at build time from these same tools (`listedAtBuild`), served
   * instead of the SDK converting every schema again; absent, the SDK answers.
   */
  toolsList?: ListToolsResult;
  /** Where unexpected errors are reported (stderr in production); never stdout. */
  log: (message: string) => void;
}

/** Builds the MCP server from injected dependencies; no side effects until connected. */
export function createServer(dependencies: ServerDependencies): McpServer {
  const server = new McpServer(
    { name: SERVER_NAME, version: dependencies.version },
    { instructions: INSTRUCTIONS },
  );
  const services = once(dependencies.loadServices);
  for (const tool of dependencies.tools) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        // With the list made at build time served, a tool's schema is built at its first call.
        inputSchema: dependencies.toolsList
          ? z.lazy(() => argumentSchema(tool))
          : argumentSchema(tool),
        // The title is the tool's own (above): repeating it in the annotations cost every
        // session ~700 characters of context for nothing.
        annotations: tool.annotations,
      },
      async (input: unknown, extra: ToolExtra) =>
        runTool(tool, input, dependencies, services, {
          ...toolCall(extra),
          ...userQuestions(server, extra),
        }),
    );
  }
  for (const tool of dependencies.hookTools ?? []) registerHookTool(server, tool, dependencies);
  const { toolsList } = dependencies;
  // Replaces the handler the SDK set at the first registerTool; calls are still validated and
  // dispatched by the SDK against the registered schemas.
  if (toolsList) server.server.setRequestHandler(ListToolsRequestSchema, () => toolsList);
  return server;
}

/**
 * MCP Apps visibility: a tool for the app (the client) alone. Claude Code 2.1.328 then leaves it
 * out of the model's tool list and its deferred-tool list, and still runs `mcp_tool` hooks on it.
 */
export const HIDDEN_FROM_MODEL = { ui: { visibility: ['app'] } };

/**
 * A hook tool answers with the hook's JSON as its text, or an empty text for no decision; on any
 * error too (logged), because a hook must never block or change a call through its own bug.
 */
function registerHookTool(
  server: McpServer,
  tool: HookTool,
  { context, log }: Pick<ServerDependencies, 'context' | 'log'>,
): void {
  server.registerTool(
    tool.name,
    {
      description: tool.description,
      inputSchema: tool.inputSchema,
      annotations: tool.annotations,
      _meta: HIDDEN_FROM_MODEL,
    },
    async (input: Record<string, unknown>): Promise<CallToolResult> => {
      let text = '';
      try {
        text = (await tool.answer(input, context.env)) ?? '';
      } catch (error) {
        log(`${tool.name} let the call through after an error: ${String(error)}`);
      }
      return { content: [{ type: 'text', text }] };
    },
  );
}

/** `load`, run at the first call only; a failed load is tried again at the next. */
export function once<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };
}

type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

function toolCall(extra: ToolExtra): ToolCall {
  const progressToken = extra._meta?.progressToken;
  return {
    signal: extra.signal,
    reportProgress: async (message, progress, total) => {
      if (progressToken === undefined) return;
      await extra
        .sendNotification({
          method: 'notifications/progress',
          params: { progressToken, progress, message, ...(total !== undefined ? { total } : {}) },
        })
        .catch(() => undefined);
    },
  };
}

/** How long the user may take over a form (typing or pasting a key). */
const USER_ANSWER_TIMEOUT_MS = 10 * 60_000;

/** `askUser` through MCP form elicitation, when the client declared it can. */
function userQuestions(server: McpServer, extra: ToolExtra): Pick<ToolCall, 'askUser'> {
  if (!server.server.getClientCapabilities()?.elicitation?.form) return {};
  return {
    askUser: async (question: UserQuestion): Promise<UserAnswer> => {
      const result = await server.server.elicitInput(userQuestionForm(question), {
        signal: extra.signal,
        timeout: USER_ANSWER_TIMEOUT_MS,
        relatedRequestId: extra.requestId,
      });
      const value = result.content?.value;
      return { action: result.action, ...(typeof value === 'string' ? { value } : {}) };
    },
  };
}

/** Runs one tool call: its handler, with the services loaded, as a guarded MCP result. */
export async function runTool(
  tool: ToolDefinition,
  input: unknown,
  dependencies: Pick<ServerDependencies, 'context' | 'log'>,
  services: () => Promise<Services>,
  call: ToolCall,
): Promise<CallToolResult> {
  const { context } = dependencies;
  return guardTool(
    tool.name,
    async () => tool.handler(input as never, { context, services: await services(), call }),
    dependencies,
  );
}

/**
 * A tool's text as its MCP result, and what it throws as an error result: the caller's
 * mistakes and file-system problems in words, anything else as an internal error logged to
 * stderr. The native-task door runs task_start through it too, so its errors read the same.
 */
export async function guardTool(
  name: string,
  work: () => Promise<string>,
  { context, log }: Pick<ServerDependencies, 'context' | 'log'>,
): Promise<CallToolResult> {
  try {
    return { content: [{ type: 'text', text: await work() }] };
  } catch (error) {
    if (error instanceof UserError) return errorResult(error.message);
    const fileProblem = describeFileSystemError(error, context.dataHome);
    if (fileProblem) return errorResult(fileProblem);
    log(`${name} failed unexpectedly: ${(error as Error).stack ?? String(error)}`);
    return errorResult(
      `${name} failed with an internal error: ${(error as Error).message}. ` +
        'This is a bug in delegate; the details are in the server log (stderr).',
    );
  }
}

function errorResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}
