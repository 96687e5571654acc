// One way to write a count with its noun and one way to write dollars, everywhere: the helpers'
// tables, and a scan of the sources for the hand-made forms they replaced.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatUsd } from '../../server/src/util/format-usd.ts';
import { plural } from '../../server/src/util/plural.ts';

const SOURCES = join(import.meta.dirname, '..', '..', 'server', 'src');

describe('plural', () => {
  it.each([
    [0, 'file', undefined, '0 files'],
    [1, 'file', undefined, '1 file'],
    [2, 'file', undefined, '2 files'],
    [1, 'retried attempt', undefined, '1 retried attempt'],
    [1, 'match', 'matches', '1 match'],
    [3, 'match', 'matches', '3 matches'],
    [1, 'file or folder', 'files and folders', '1 file or folder'],
    [1234567, 'line', undefined, '1,234,567 lines'],
  ])('plural(%d, %j, %j) is %j', (count, noun, nouns, expected) => {
    expect(plural(count, noun, nouns)).toBe(expected);
  });
});

describe('formatUsd: cents, plus up to two more digits for small amounts', () => {
  it.each([
    [0, '$0.00'],
    [0.5, '$0.50'],
    [0.072, '$0.072'],
    [0.0024, '$0.0024'],
    [0.00004, '$0.00'],
    [1, '$1.00'],
    [12.34567, '$12.3457'],
    [1234.5, '$1234.50'],
  ])('formatUsd(%d) is %j', (amount, expected) => {
    expect(formatUsd(amount)).toBe(expected);
  });
});

describe('the sources use them', () => {
  const files = (readdirSync(SOURCES, { recursive: true }) as string[])
    .filter((name) => name.endsWith('.ts'))
    .map((name) => ({ name, text: readFileSync(join(SOURCES, name), 'utf8') }));

  it.each([
    ['dollars by toFixed', /\$\$\{[^`]*?\.toFixed\(/],
    ['a "(s)" plural after a number', /\}\s?[a-z]+\(s\)/],
    ['a hand-made plural ending', /=== 1 \? '' : 's'/],
    [
      '"1 files" in the making: a length before a plural noun',
      /\.length\} (files|lines|tasks|calls|attempts|turns|rounds|tokens)\b/,
    ],
  ])('no %s', (_what, pattern) => {
    const found = files.filter((file) => pattern.test(file.text)).map((file) => file.name);
    expect(found).toEqual([]);
  });
});
