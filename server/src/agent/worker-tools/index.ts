import { editFileTool } from './edit-file.ts';
import { grepTool } from './grep.ts';
import { listFilesTool } from './list-files.ts';
import { readFileTool } from './read-file.ts';
import { runBashTool } from './run-bash.ts';
import type { WorkerTool } from './types.ts';
import { writeFileTool } from './write-file.ts';

export type { WorkerTool, WorkerToolContext, WorkerToolResult } from './types.ts';

/** The builtin agent's file and shell tools, in the order the model sees them. */
export const FILE_AND_SHELL_TOOLS: readonly WorkerTool[] = [
  readFileTool,
  writeFileTool,
  editFileTool,
  listFilesTool,
  grepTool,
  runBashTool,
];

/** The tools that only read: what a read-only run (an explore) offers. */
export const READ_ONLY_TOOLS: readonly WorkerTool[] = FILE_AND_SHELL_TOOLS.filter(
  (tool) => tool.isReadOnly,
);
