import { z } from 'zod';
import type { Environment } from '../config/paths.ts';
import { WRITES_LOCAL_FILES, type ToolAnnotations } from './annotations.ts';

/**
 * A tool only Claude Code's `mcp_tool` hooks call (hooks/hooks.json): it answers the large-read
 * guard's PreToolUse and PostToolUse in the running server, at the cost of one JSON-RPC round
 * trip instead of a Node start per tool call. It is listed with MCP Apps visibility `app` only,
 * so Claude Code keeps it out of the model's tool list (and its context) while hooks still reach it.
 */
export interface HookTool {
  name: string;
  description: string;
  inputSchema: z.ZodRawShape;
  annotations: ToolAnnotations;
  /** The hook's JSON answer, or undefined for none; throws on input that is not a hook call. */
  answer(input: Record<string, unknown>, env: Environment): Promise<string | undefined>;
}

/** Claude Code's hook `input` interpolation turns objects into JSON text; built-in tools' are objects. */
function parsed(value: unknown): unknown {
  if (typeof value !== 'string' || value === '') return undefined;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

export const hookAnswerTool: HookTool = {
  name: 'hook_answer',
  description: "Internal to delegate's hooks; not for the model.",
  inputSchema: {
    event: z.string(),
    tool_name: z.string(),
    tool_input: z.string(),
    tool_response: z.string().optional(),
    cwd: z.string(),
  },
  annotations: WRITES_LOCAL_FILES,
  async answer(input, env) {
    const call = {
      tool_name: input.tool_name,
      tool_input: parsed(input.tool_input) as Record<string, unknown> | undefined,
      cwd: input.cwd,
    };
    // Loaded at the first hook call, not at server start.
    if (input.event === 'PreToolUse') {
      const { answerPreToolUse } = await import('../guard/pre-tool-answer.ts');
      return answerPreToolUse(call, env);
    }
    if (input.event === 'PostToolUse') {
      const { answerPostToolUse } = await import('../guard/post-tool-answer.ts');
      return answerPostToolUse({ ...call, tool_response: parsed(input.tool_response) }, env);
    }
    return undefined;
  },
};
