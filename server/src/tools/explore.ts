import { z } from 'zod';
import { EXPLORES } from './annotations.ts';
import { checkProfileArgument, defineTool } from './define-tool.ts';
import { withHeartbeat } from './heartbeat.ts';

export const exploreTool = defineTool({
  name: 'explore',
  title: 'Explore the code with a worker',
  description:
    'Answers a question about the code ("where is X handled?") by a worker that searches and ' +
    'reads the project itself, read-only: the answer, its path:line references checked, a usage ' +
    'line. Use it when you do not know which files matter.',
  inputSchema: () => ({
    question: z.string().min(1).describe('The question, with what you know.'),
    agent: z.string().min(1).optional().describe('Agent definition to follow (agents_list).'),
    profile: z.string().min(1).optional().describe('Worker profile, or "auto".'),
    max_turns: z.number().int().min(1).max(60).optional().describe('Turn limit (default 25).'),
  }),
  nativeTask: 'call',
  annotations: EXPLORES,
  handler: (input, { context, services, call }) => {
    if (input.profile !== undefined) checkProfileArgument(input.profile, 'profile');
    return withHeartbeat(call, 'exploring', (waiting) =>
      services.runExplore(
        {
          question: input.question,
          ...(input.agent ? { agent: input.agent } : {}),
          ...(input.profile ? { profile: input.profile } : {}),
          ...(input.max_turns ? { maxTurns: input.max_turns } : {}),
        },
        context,
        call.signal,
        waiting,
      ),
    );
  },
});
