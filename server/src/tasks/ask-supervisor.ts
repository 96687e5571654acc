import { isTerminal, jobDir } from '../store/job-store.ts';
import { takeMessages } from '../store/mailbox.ts';
import type { JobFile } from '../store/job-file.ts';
import type { TaskRecorder } from './task-recorder.ts';
import { settleAttempts } from './attempts.ts';

/**
 * Flips the task to needs_input and waits for an answer; after the timeout, proceeds on its own.
 * Only the builtin engine asks: a CLI run cannot pause for an answer.
 */
export async function askSupervisor(
  job: JobFile,
  recorder: TaskRecorder,
  question: string,
  signal: AbortSignal,
): Promise<string> {
  await recorder.update(() => ({
    state: 'needs_input',
    question,
    lastEventAt: new Date().toISOString(),
  }));
  recorder.event('question', question);
  await showOnTask(job, recorder.dataHome);
  const answer = await waitForAnswer(job, recorder.dataHome, signal);
  await recorder.update((current) =>
    isTerminal(current.state)
      ? undefined
      : { state: 'running', question: undefined, lastEventAt: new Date().toISOString() },
  );
  recorder.event('answer', answer ?? '(no answer in time)');
  await showOnTask(job, recorder.dataHome);
  return (
    answer ??
    'No answer came in time. Proceed on your best conservative judgement, and say in your summary what you assumed.'
  );
}

/** An attempt's question (or its answer) shows on its task at once. */
async function showOnTask(job: JobFile, dataHome: string): Promise<void> {
  if (job.attemptOf) await settleAttempts(dataHome, job.attemptOf).catch(() => undefined);
}

async function waitForAnswer(
  job: JobFile,
  dataHome: string,
  signal: AbortSignal,
): Promise<string | undefined> {
  const deadline = Date.now() + job.questionTimeoutS * 1000;
  let answer: string | undefined;
  while (answer === undefined && Date.now() < deadline && !signal.aborted) {
    answer = takeMessages(jobDir(dataHome, job.id), 'answer')[0]?.text;
    if (answer === undefined) await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return answer;
}
