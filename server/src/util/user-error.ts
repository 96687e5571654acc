/**
 * An error whose message is written for the supervisor: it says what went wrong and what
 * to do next. Tools return it as an `isError` result verbatim; anything else is a bug.
 */
export class UserError extends Error {
  override readonly name = 'UserError';
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
