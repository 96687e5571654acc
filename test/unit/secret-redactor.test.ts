import { describe, expect, it } from 'vitest';
import { REDACTED, secretRedactor } from '../../server/src/util/secret-redactor.ts';
import { echoForms, holdsSecret } from '../helpers/secret-forms.ts';

const KEY = 'sk-unit-canary/0a1b2c+3d4e5f6a7b8c9d';
const OTHER = 'ghu_OtherToken0123456789abcdefXYZ';

describe('secretRedactor', () => {
  it('cuts every echoed form of every key out of text', () => {
    const redactor = secretRedactor([KEY, OTHER]);
    for (const key of [KEY, OTHER]) {
      for (const form of echoForms(key)) {
        const text = `before ${form} after`;
        expect(holdsSecret(text, key)).toBe(true);
        const clean = redactor.text(text);
        expect(clean, form).toContain(REDACTED);
        expect(holdsSecret(clean, key), form).toBe(false);
        expect(clean.startsWith('before ')).toBe(true);
      }
    }
  });

  it('finds a key inside a longer base64 value at any position', () => {
    const redactor = secretRedactor([KEY]);
    for (let prefix = 0; prefix < 7; prefix += 1) {
      const encoded = Buffer.from(`${'x'.repeat(prefix)}${KEY}${'y'.repeat(prefix)}`).toString(
        'base64',
      );
      expect(holdsSecret(redactor.text(encoded), KEY), `prefix ${prefix}`).toBe(false);
    }
  });

  it('keeps tool-call arguments valid JSON and leaves other text and values alone', () => {
    const redactor = secretRedactor([KEY, 'short']);
    const input = {
      command: `curl -H "Authorization: Bearer ${KEY}"`,
      nested: [{ [KEY]: encodeURIComponent(KEY) }, 3, true, null],
      plain: 'nothing secret; short stays',
    };
    const clean = redactor.value(input);
    expect(JSON.parse(JSON.stringify(clean))).toEqual({
      command: `curl -H "Authorization: Bearer ${REDACTED}"`,
      nested: [{ [REDACTED]: REDACTED }, 3, true, null],
      plain: 'nothing secret; short stays',
    });
    expect(input.command).toContain(KEY);
  });

  it('does nothing without keys and reuses the compiled set', () => {
    expect(secretRedactor([]).text(`a ${KEY}`)).toBe(`a ${KEY}`);
    expect(secretRedactor([KEY, OTHER])).toBe(secretRedactor([OTHER, KEY]));
  });
});
