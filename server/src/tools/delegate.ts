import { z } from 'zod';
import type { DelegateInput } from '../delegation/run-delegation.ts';
import { RUNS_WORKERS } from './annotations.ts';
import { checkProfileArgument, defineTool, lazily } from './define-tool.ts';
import { withHeartbeat } from './heartbeat.ts';

/** The fields of one delegation; `delegate_batch` jobs take the same ones. */
export const delegateFields = lazily(() => ({
  task: z
    .string()
    .min(1)
    .describe('What the worker should do, e.g. "List every ERROR with its likely cause".'),
  files: z
    .array(z.string().min(1))
    .max(200)
    .optional()
    .describe(
      'Paths or globs under the project, or a saved output; their full text goes to the worker.',
    ),
  profile: z.string().min(1).optional().describe('Worker profile, or "auto" (see providers).'),
  write_to: z
    .string()
    .min(1)
    .optional()
    .describe(
      'File under the project to write the answer to; you then get a preview, the path and the size.',
    ),
  max_output_tokens: z
    .number()
    .int()
    .positive()
    .max(200_000)
    .optional()
    .describe("Answer length cap in tokens (default: the profile's, else 8192)."),
}));

export const delegateTool = defineTool({
  name: 'delegate',
  title: 'Delegate to a worker model',
  description:
    'Sends a task and files to a worker model; returns its answer and a usage line. ' +
    'The server reads the files from disk, so they never enter your context: use it instead of ' +
    'reading big files (logs, dumps, generated code) to summarise, extract, search or draft. ' +
    'Long answers come back as a preview and a file path (write_to picks it).',
  inputSchema: delegateFields,
  nativeTask: 'call',
  annotations: RUNS_WORKERS,
  handler: (input, { context, services, call }) =>
    withHeartbeat(call, 'waiting for the worker', async (waiting) =>
      services.runDelegation(toDelegateInput(input), context, call.signal, waiting),
    ),
});

/** The tool's snake_case arguments as the engine's input. */
export function toDelegateInput(input: {
  task: string;
  files?: string[] | undefined;
  profile?: string | undefined;
  write_to?: string | undefined;
  max_output_tokens?: number | undefined;
}): DelegateInput {
  if (input.profile !== undefined) checkProfileArgument(input.profile, 'profile');
  return {
    task: input.task,
    ...(input.files ? { files: input.files } : {}),
    ...(input.profile ? { profile: input.profile } : {}),
    ...(input.write_to ? { writeTo: input.write_to } : {}),
    ...(input.max_output_tokens ? { maxOutputTokens: input.max_output_tokens } : {}),
  };
}
