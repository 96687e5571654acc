import { UserError } from '../../util/user-error.ts';

export type ToolInput = Record<string, unknown>;

/** The arguments object of a call; models sometimes send nothing at all for a tool without arguments. */
export function inputObject(input: unknown, toolName: string): ToolInput {
  if (typeof input === 'object' && input !== null && !Array.isArray(input)) {
    return input as ToolInput;
  }
  throw new UserError(
    `${toolName} expects a JSON object of arguments, got ${JSON.stringify(input)}.`,
  );
}

export function requiredString(
  input: ToolInput,
  name: string,
  options: { allowEmpty?: boolean } = {},
): string {
  const value = input[name];
  if (typeof value !== 'string') {
    throw new UserError(`"${name}" is required and must be a string.`);
  }
  if (value === '' && !options.allowEmpty) throw new UserError(`"${name}" must not be empty.`);
  return value;
}

/** Undefined when missing, null or empty: models fill optional fields with all three. */
export function optionalString(input: ToolInput, name: string): string | undefined {
  const value = input[name];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new UserError(`"${name}" must be a string.`);
  return value;
}

/** Accepts numeric strings too ("10"), which some models send for numbers. */
export function optionalNumber(
  input: ToolInput,
  name: string,
  options: { min: number; isInteger?: boolean },
): number | undefined {
  const value = input[name];
  if (value === undefined || value === null || value === '') return undefined;
  const number = typeof value === 'string' ? Number(value) : value;
  const kind = options.isInteger ? 'an integer' : 'a number';
  if (
    typeof number !== 'number' ||
    !Number.isFinite(number) ||
    (options.isInteger && !Number.isInteger(number)) ||
    number < options.min
  ) {
    throw new UserError(
      `"${name}" must be ${kind} of at least ${options.min}, got ${JSON.stringify(value)}.`,
    );
  }
  return number;
}
