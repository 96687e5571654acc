import { errorMessage, TaskError, UserError } from '../../util/user-error.ts';
import type { WorkerTool } from './types.ts';

/**
 * Wraps a tool so that nothing it throws reaches the agent loop: a `UserError` becomes its
 * message, anything else (EACCES, EISDIR, ...) the tool's name plus the system's message.
 */
export function defineWorkerTool(tool: WorkerTool): WorkerTool {
  return {
    ...tool,
    run: async (input, context) => {
      try {
        return await tool.run(input, context);
      } catch (error) {
        if (error instanceof TaskError) throw error;
        const content =
          error instanceof UserError
            ? error.message
            : `${tool.name} failed: ${errorMessage(error)}`;
        return { content, isError: true };
      }
    },
  };
}
