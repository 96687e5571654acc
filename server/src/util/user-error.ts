/**
 * An error whose message is written for the supervisor: it says what went wrong and what
 * to do next. Tools return it as an `isError` result verbatim; anything else is a bug.
 */
export class UserError extends Error {
  override readonly name = 'UserError';
}

/**
 * A task that ended badly, with the task state it ends in. No worker tool turns it into text
 * for the model (a runner gone for good ends the task, it is not the command's failure).
 */
export class TaskError extends Error {
  constructor(
    message: string,
    readonly taskState: 'failed' | 'timeout' | 'lost',
  ) {
    super(message);
  }
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
