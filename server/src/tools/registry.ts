import { delegateBatchTool } from './delegate-batch.ts';
import { delegateTool } from './delegate.ts';
import type { ToolDefinition } from './define-tool.ts';
import { providersTool } from './providers.ts';
import { usageTool } from './usage.ts';

/** Every tool the server offers, in the order `tools/list` shows them. */
export const TOOLS: readonly ToolDefinition[] = [
  delegateTool,
  delegateBatchTool,
  providersTool,
  usageTool,
];
