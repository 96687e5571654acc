import { describe, expect, it } from 'vitest';
import { secretFinder } from '../../server/src/util/secret-finder.ts';

const KEY = 'sk-proj-Ab3/9xZ+q';
const find = secretFinder([{ what: 'the key of profile p', value: KEY }]);
const hex = (text: string) => Buffer.from(text).toString('hex');
const backwards = (text: string) => [...text].reverse().join('');

describe('secretFinder: a key in any form a worker could write it', () => {
  const found: Array<[form: string, text: string]> = [
    ['as is', `key=${KEY};`],
    ['upper case', KEY.toUpperCase()],
    ['lower case', KEY.toLowerCase()],
    ['backwards', backwards(KEY)],
    ['hex', hex(KEY)],
    ['HEX', hex(KEY).toUpperCase()],
    ['hex, bytes apart', hex(KEY).replace(/(..)(?!$)/g, '$1 ')],
    ['\\x escapes', hex(KEY).replace(/(..)/g, '\\x$1')],
    [
      '0x bytes',
      hex(KEY)
        .replace(/(..)(?!$)/g, '0x$1, ')
        .replace(/^/, '0x'),
    ],
    ['backwards in hex', hex(backwards(KEY))],
    ['base64', Buffer.from(KEY).toString('base64')],
    ['base64 of user:key', Buffer.from(`u:${KEY}`).toString('base64')],
    ['URL-safe base64', Buffer.from(`ab${KEY}`).toString('base64url')],
    ['URL-encoded', encodeURIComponent(KEY)],
    ['JSON-escaped', JSON.stringify(KEY).replaceAll('/', '\\/')],
    [
      '\\u escapes',
      [...KEY].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join(''),
    ],
  ];
  for (const [form, text] of found) {
    it(`finds it ${form}`, () => expect(find(text)?.what).toBe('the key of profile p'));
  }

  const clean: Array<[what: string, text: string]> = [
    ['a part of it', KEY.slice(0, 12)],
    ['another key', 'sk-proj-Ab3/9xZ+r'],
    ['part of its hex', hex(KEY).slice(0, 20)],
    ['ordinary text', 'the quick brown fox jumps over the lazy dog'],
  ];
  for (const [what, text] of clean) {
    it(`finds nothing in ${what}`, () => expect(find(text)).toBeUndefined());
  }

  it('ignores values too short to be keys', () => {
    expect(secretFinder([{ what: 'x', value: 'short' }])('short')).toBeUndefined();
  });
});
