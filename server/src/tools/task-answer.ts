import { z } from 'zod';

import { UserError } from '../util/user-error.ts';
import { WRITES_LOCAL_FILES } from './annotations.ts';
import { defineTool } from './define-tool.ts';

export const taskAnswerTool = defineTool({
  name: 'task_answer',
  title: 'Answer or steer a task',
  description:
    'Answers the pending question of a task in needs_input (it resumes), or steers a running task: the message ' +
    'reaches the worker at its next step.',
  inputSchema: {
    task_id: z.string().min(1).describe('The task.'),
    answer: z.string().min(1).describe('The answer, or the steering message.'),
  },
  annotations: WRITES_LOCAL_FILES,
  handler: async (input, { context, services }) => {
    const { appendEvent, getTask, isTerminal, jobDir, postMessage } = services;
    const job = await getTask(context.dataHome, input.task_id);
    if (isTerminal(job.state)) {
      throw new UserError(
        `${job.id} has already ended (${job.state}); read it with task_result, or start a new task.`,
      );
    }
    const kind = job.state === 'needs_input' ? 'answer' : 'steer';
    await postMessage(jobDir(context.dataHome, job.id), kind, input.answer);
    appendEvent(context.dataHome, job.id, kind === 'answer' ? 'answered' : 'steered', input.answer);
    return kind === 'answer'
      ? `Answered ${job.id}; it resumes now.`
      : `Sent to ${job.id}; the worker reads it at its next step.`;
  },
});
