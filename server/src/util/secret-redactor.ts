/**
 * Cuts keys out of text an endpoint sent back, in every form an echo could take: as is,
 * JSON-escaped (any character as `\uXXXX`, `/` as `\/`), URL-encoded (any character as `%XX`),
 * mixed, and base64 (standard and URL-safe) of the key alone or inside a longer value such as
 * Basic auth's `user:key`, at each of the three byte alignments. An endpoint, a gateway or a
 * prompt-injected model may echo the Authorization header; what it sends reaches results,
 * files, the ledger and logs.
 */

export const REDACTED = '[redacted]';

/** Shorter values are not keys, and cutting them would mangle ordinary text. */
export const MIN_SECRET_CHARS = 8;

export interface SecretRedactor {
  text(text: string): string;
  /** A copy of a JSON-like value with every string (keys of objects too) redacted. */
  value<T>(value: T): T;
}

const NOTHING_TO_REDACT: SecretRedactor = { text: (text) => text, value: (value) => value };

/**
 * Building the pattern costs far more than applying it, and the same few keys are redacted on
 * every call of a process: the last compiled set is kept (it depends only on its input).
 */
let lastCompiled: { signature: string; redactor: SecretRedactor } | undefined;

/** A redactor for `secrets` (values shorter than {@link MIN_SECRET_CHARS} are ignored). */
export function secretRedactor(secrets: Iterable<string>): SecretRedactor {
  const unique = [...new Set(secrets)].filter((secret) => secret.length >= MIN_SECRET_CHARS).sort();
  if (unique.length === 0) return NOTHING_TO_REDACT;
  const signature = unique.join('\0');
  if (lastCompiled?.signature === signature) return lastCompiled.redactor;
  const redactor = compile(unique);
  lastCompiled = { signature, redactor };
  return redactor;
}

function compile(secrets: readonly string[]): SecretRedactor {
  const alternatives = secrets.flatMap((secret) => [
    encodedPattern(secret),
    ...base64Forms(secret).map(escapeRegExp),
  ]);
  // Longest first, so a whole form wins over a shorter one it contains.
  alternatives.sort((a, b) => b.length - a.length);
  const pattern = new RegExp(alternatives.join('|'), 'g');
  const text = (input: string): string => input.replace(pattern, REDACTED);
  const value = <T>(input: T): T => redactValue(input, text) as T;
  return { text, value };
}

function redactValue(input: unknown, text: (input: string) => string): unknown {
  if (typeof input === 'string') return text(input);
  if (Array.isArray(input)) return input.map((item) => redactValue(item, text));
  if (input && typeof input === 'object') {
    return Object.fromEntries(
      Object.entries(input).map(([name, item]) => [text(name), redactValue(item, text)]),
    );
  }
  return input;
}

/** Each character as itself, as a JSON `\uXXXX` escape or as `%XX`, in any mix and hex case. */
export function encodedPattern(secret: string): string {
  return [...secret].map(characterForms).join('');
}

function characterForms(character: string): string {
  const code = character.codePointAt(0) ?? 0;
  if (code > 0xffff) return escapeRegExp(character);
  const hex = code.toString(16).padStart(4, '0');
  const forms = [escapeRegExp(character), `\\\\u${anyCase(hex)}`];
  if (code < 0x80) forms.push(`%${anyCase(hex.slice(2))}`);
  if (character === '/') forms.push('\\\\/');
  return `(?:${forms.join('|')})`;
}

const anyCase = (hex: string) =>
  [...hex]
    .map((digit) => (/[a-f]/.test(digit) ? `[${digit}${digit.toUpperCase()}]` : digit))
    .join('');

/**
 * The part of base64 that depends only on the secret's bytes, for each alignment of the secret
 * within the encoded value (0, 1 or 2 bytes before it modulo 3), in both alphabets.
 */
export function base64Forms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const forms = new Set<string>();
  for (const before of [0, 1, 2]) {
    const encoded = Buffer.concat([Buffer.alloc(before), bytes]).toString('base64');
    const start = Math.ceil((before * 8) / 6);
    const end = Math.floor(((before + bytes.length) * 8) / 6);
    const stable = encoded.slice(start, end);
    if (stable.length < MIN_SECRET_CHARS) continue;
    forms.add(stable);
    forms.add(stable.replaceAll('+', '-').replaceAll('/', '_'));
  }
  return [...forms];
}

export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}
