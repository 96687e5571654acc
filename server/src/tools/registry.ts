import { agentsListTool } from './agents-list.ts';
import { delegateBatchTool } from './delegate-batch.ts';
import { delegateTool } from './delegate.ts';
import { exploreTool } from './explore.ts';
import type { ToolDefinition } from './define-tool.ts';
import { providerKeyTool } from './provider-key.ts';
import { providerRemoveTool } from './provider-remove.ts';
import { providerSetTool } from './provider-set.ts';
import { providersTool } from './providers.ts';
import { taskAnswerTool } from './task-answer.ts';
import { taskCancelTool } from './task-cancel.ts';
import { taskCleanupTool } from './task-cleanup.ts';
import { taskProgressTool } from './task-progress.ts';
import { taskResultTool } from './task-result.ts';
import { taskStartTool } from './task-start.ts';
import { taskStatusTool } from './task-status.ts';
import { usageTool } from './usage.ts';

/** Every tool the server offers, in the order `tools/list` shows them. */
export const TOOLS: readonly ToolDefinition[] = [
  delegateTool,
  delegateBatchTool,
  exploreTool,
  taskStartTool,
  taskStatusTool,
  taskProgressTool,
  taskAnswerTool,
  taskCancelTool,
  taskResultTool,
  taskCleanupTool,
  agentsListTool,
  providersTool,
  providerSetTool,
  providerRemoveTool,
  providerKeyTool,
  usageTool,
];
