import { base64Forms, encodedPattern, escapeRegExp, MIN_SECRET_CHARS } from './secret-redactor.ts';

/** A secret with words for the result that names it ("the key of profile deepseek"). */
export interface NamedSecret {
  what: string;
  value: string;
}

/** Finds which secret a text holds, if any. */
export type SecretFinder = (text: string) => NamedSecret | undefined;

/**
 * Finds secrets in the work a task leaves (files, names, commit messages), in every form a
 * worker could write one to smuggle it out: the forms the redactor knows (as is, JSON-escaped,
 * URL-encoded, mixed, base64 at each alignment), plus hex (contiguous, or byte by byte with
 * `\x`, `0x` or a separator), all in any letter case, and each of those for the secret written
 * backwards. Broader than the redactor on purpose: what it finds fails a task, it never edits
 * text, and a false alarm costs a look while a miss costs the key.
 */
export function secretFinder(secrets: readonly NamedSecret[]): SecretFinder {
  const usable = secrets.filter((secret) => secret.value.length >= MIN_SECRET_CHARS);
  const patterns = usable.map((secret) => ({ secret, pattern: secretPattern(secret.value) }));
  return (text) => patterns.find(({ pattern }) => pattern.test(text))?.secret;
}

/** The longest text one form of these secrets can take: chunks overlap by this much. */
export function longestForm(secrets: readonly NamedSecret[]): number {
  // JSON's `\uXXXX` is the widest: six characters for each one of the secret.
  return Math.max(0, ...secrets.map((secret) => secret.value.length * 6));
}

function secretPattern(secret: string): RegExp {
  const backwards = [...secret].reverse().join('');
  const alternatives = [secret, backwards].flatMap((form) => [
    encodedPattern(form),
    ...base64Forms(form).map(escapeRegExp),
    hexPattern(form),
  ]);
  return new RegExp(alternatives.join('|'), 'i');
}

/** Each byte as two hex digits, optionally after `\x` or `0x`, optionally separated. */
function hexPattern(secret: string): string {
  return [...Buffer.from(secret, 'utf8')]
    .map((byte) => `(?:\\\\x|0x)?${byte.toString(16).padStart(2, '0')}`)
    .join('[\\s:,.-]{0,2}');
}
