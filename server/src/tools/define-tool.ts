import { z } from 'zod';
import type { AppContext } from '../profiles/app-context.ts';
import type { ToolAnnotations } from './annotations.ts';
import type * as ServicesModule from './services.ts';
import { profileNameProblem } from '../config/config-rules.ts';
import { UserError } from '../util/user-error.ts';

/**
 * A tool: name, zod input shape, annotations and a handler that returns the result text (or a
 * promise of it). Handlers never touch the MCP SDK; they throw `UserError` for anything the
 * caller can fix. The server hands them what they run with: the context, services and call.
 */
export interface ToolDefinition<Shape extends z.ZodRawShape = z.ZodRawShape> {
  name: string;
  title: string;
  /** First sentence: what it does and returns. At most 1,024 characters. */
  description: string;
  inputSchema: Shape;
  /** Pass arguments the schema does not name to the handler (to refuse them by name) instead of dropping them. */
  shouldSeeUnknownArguments?: boolean;
  annotations: ToolAnnotations;
  /**
   * On a client with the MCP tasks extension (`server/src/dual-era.ts`): `job`, the call is a
   * native background task on the job store (task_start); `call`, a call still running after a
   * few seconds, or one that asks the user, becomes one (`server/src/call-tasks.ts`).
   */
  nativeTask?: 'job' | 'call';
  handler(input: z.infer<z.ZodObject<Shape>>, run: ToolRun): string | Promise<string>;
}

/**
 * What the tool handlers run (task engine, agent lookup, provider clients, profile editing):
 * `tools/services.ts`, which the server loads once, at the first tool call, so that
 * `initialize` and `tools/list` never load it.
 */
export type Services = typeof ServicesModule;

/** What a handler is called with besides its arguments. */
export interface ToolRun {
  context: AppContext;
  services: Services;
  call: ToolCall;
}

/** What a running tool call can do besides returning: notice cancellation, report progress. */
export interface ToolCall {
  /** Aborted when the client cancels the call. */
  signal: AbortSignal;
  /** Sends an MCP progress notification when the client asked for them; a no-op otherwise. */
  reportProgress(message: string, progress: number, total?: number): Promise<void>;
  /**
   * Asks the USER for one line of text through MCP form elicitation; the answer goes to the
   * handler, never through the model. Absent when the client cannot elicit.
   */
  askUser?(question: UserQuestion): Promise<UserAnswer>;
}

export interface UserQuestion {
  /** What the user reads above the form. */
  message: string;
  title: string;
  description: string;
}

/** A user question as the MCP elicitation form (the legacy elicitation request and a native task's `input_required` show the same one). */
export function userQuestionForm(question: UserQuestion) {
  return {
    mode: 'form' as const,
    message: question.message,
    requestedSchema: {
      type: 'object' as const,
      properties: {
        value: {
          type: 'string' as const,
          title: question.title,
          description: question.description,
        },
      },
      required: ['value'],
    },
  };
}

export type UserForm = ReturnType<typeof userQuestionForm>;

export interface UserAnswer {
  action: 'accept' | 'decline' | 'cancel';
  /** The text entered, on accept. */
  value?: string;
}

/** A tool as its file writes it: the input shape is made by a function, at its first use. */
export interface ToolSpec<Shape extends z.ZodRawShape> extends Omit<
  ToolDefinition<Shape>,
  'inputSchema'
> {
  inputSchema: () => Shape;
}

/**
 * A tool as the registry holds it. Its input shape is built when first read, not when the
 * module loads: zod builds schemas slowly, and the server answers `tools/list` from the list
 * made at build time, so a start need not build any (about 9 ms of a start measured). Every
 * string argument is checked for NUL bytes first: no path, command, branch or name can hold one,
 * and the system calls they reach would fail with a message about the call rather than the
 * argument.
 */
export function defineTool<Shape extends z.ZodRawShape>(
  tool: ToolSpec<Shape>,
): ToolDefinition<Shape> {
  let shape: Shape | undefined;
  return {
    ...tool,
    get inputSchema() {
      return (shape ??= tool.inputSchema());
    },
    handler: (input, run) => {
      checkNoNulBytes(tool.name, input);
      return tool.handler(input, run);
    },
  };
}

/** `make`, run at the first call only: a shape several tools share, built when first needed. */
export function lazily<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}

/** How a tool's arguments are checked: its shape, keeping unknown names when it asks to see them. */
export function argumentSchema(tool: ToolDefinition): z.ZodObject {
  return tool.shouldSeeUnknownArguments
    ? z.looseObject(tool.inputSchema)
    : z.object(tool.inputSchema);
}

/** Refuses arguments holding a NUL byte (what every tool's handler checks first). */
export function checkNoNulBytes(toolName: string, input: unknown): void {
  const where = nulBytePath(input, '');
  if (where !== undefined) {
    throw new UserError(
      `${where || 'an argument'} contains a NUL byte (\\0), which no path, command or name may hold. Remove it and call ${toolName} again.`,
    );
  }
}

/** The argument path (`jobs[0].write_to`) of the first string holding a NUL byte, if any. */
function nulBytePath(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') return value.includes('\0') ? path : undefined;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = nulBytePath(item, `${path}[${index}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [key, item] of Object.entries(value)) {
    const found = nulBytePath(item, path ? `${path}.${key}` : key);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Refuses a profile argument that no profile could be named, before any lookup. */
export function checkProfileArgument(name: string, argument: string): void {
  const problem = profileNameProblem(name, argument);
  if (problem) throw new UserError(problem);
}
