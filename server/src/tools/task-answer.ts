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
  inputSchema: () => ({
    task_id: z.string().min(1).describe('The task.'),
    answer: z.string().min(1).describe('The answer, or the steering message.'),
  }),
  annotations: WRITES_LOCAL_FILES,
  handler: async (input, { context, services }) => {
    const { appendEvent, getTask, isTerminal, jobDir, messageTargets, postMessage } = services;
    const job = await getTask(context.dataHome, input.task_id);
    if (isTerminal(job.state)) {
      throw new UserError(
        `${job.id} has already ended (${job.state}); read it with task_result, or start a new task.`,
      );
    }
    // A task run as attempts: the answer goes to the attempt whose question it shows, steering
    // to every attempt still running.
    const targets = job.attempts ? messageTargets(context.dataHome, job) : [job];
    const kind = targets[0]?.state === 'needs_input' ? 'answer' : 'steer';
    for (const target of targets) {
      await postMessage(jobDir(context.dataHome, target.id), kind, input.answer);
      appendEvent(
        context.dataHome,
        target.id,
        kind === 'answer' ? 'answered' : 'steered',
        input.answer,
      );
    }
    const to = targets.map((target) => target.id).join(', ') || job.id;
    return kind === 'answer'
      ? `Answered ${to}; it resumes now.`
      : `Sent to ${to}; the worker${targets.length > 1 ? 's read' : ' reads'} it at ${targets.length > 1 ? 'their' : 'its'} next step.`;
  },
});
