/**
 * How a key can be echoed back (for fakes to send), and a detector for all of those forms that
 * shares no code with the product's redactor: it decodes escapes and base64 instead of
 * building patterns.
 */

const percentAll = (text: string) =>
  [...Buffer.from(text, 'utf8')].map((byte) => `%${byte.toString(16).toUpperCase()}`).join('');
const unicodeEscapeAll = (text: string) =>
  [...text]
    .map((character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .join('');

/** The key as is, JSON-escaped (dash, all, `\/`), URL-encoded, mixed, and base64 (alone and Basic auth). */
export function echoForms(key: string): string[] {
  const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
  return [
    key,
    key.replaceAll('-', '\\u002d'),
    unicodeEscapeAll(key),
    key.replaceAll('/', '\\/'),
    encodeURIComponent(key),
    percentAll(key),
    `${percentAll(key.slice(0, 5))}${unicodeEscapeAll(key.slice(5, 9))}${key.slice(9)}`,
    base64(key),
    base64(key).replaceAll('+', '-').replaceAll('/', '_'),
    base64(`user:${key}`),
    base64(`ab:${key}`),
    base64(`abc:${key}`),
    base64(`${key}:`),
  ];
}

/** Whether `text` holds `key` in any form of {@link echoForms} (or a stricter mix of them). */
export function holdsSecret(text: string, key: string): boolean {
  const decoded = text
    .replace(/\\+u([0-9a-fA-F]{4})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    .replace(/\\+\//g, '/')
    .replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  if (decoded.includes(key) || text.includes(key)) return true;
  for (const run of text.match(/[A-Za-z0-9+/_-]{12,}/g) ?? []) {
    const standard = run.replaceAll('-', '+').replaceAll('_', '/');
    for (let offset = 0; offset < 4; offset += 1) {
      if (Buffer.from(standard.slice(offset), 'base64').toString('latin1').includes(key))
        return true;
    }
  }
  return false;
}
