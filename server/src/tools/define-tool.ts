import type { z } from 'zod';
import type { EngineContext } from '../engine-context.ts';

/** All four MCP annotations, required on every tool. */
export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** A tool that only reads this machine's own files (task store, ledger, agent definitions). */
export const READS_LOCAL_FILES: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

/**
 * A tool: name, zod input shape, annotations and a handler that returns the result text.
 * Handlers never touch the MCP SDK; they throw `UserError` for anything the caller can fix.
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
  handler(
    input: z.infer<z.ZodObject<Shape>>,
    context: EngineContext,
    call: ToolCall,
  ): Promise<string>;
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

export interface UserAnswer {
  action: 'accept' | 'decline' | 'cancel';
  /** The text entered, on accept. */
  value?: string;
}

export function defineTool<Shape extends z.ZodRawShape>(
  tool: ToolDefinition<Shape>,
): ToolDefinition<Shape> {
  return tool;
}
