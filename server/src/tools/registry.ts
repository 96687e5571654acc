import { delegateTool } from './delegate.ts';
import type { ToolDefinition } from './define-tool.ts';
import { providersTool } from './providers.ts';

/** Every tool the server offers, in the order `tools/list` shows them. */
export const TOOLS: readonly ToolDefinition[] = [delegateTool, providersTool];
