import { describe, expect, it } from 'vitest';
import {
  DIGEST_LIMIT_BYTES,
  digestOutput,
  isNotableLine,
} from '../../server/src/guard/output-digest.ts';

const SAVED = '/home/u/.local/share/delegate/outputs/o_abc123.txt';
const digest = (text: string, what = 'Bash `make`') =>
  digestOutput({ what, text, savedPath: SAVED, thresholdBytes: 16 * 1024 });
const bytes = (text: string) => Buffer.byteLength(text, 'utf8');
const filler = (count: number, from = 0) =>
  Array.from({ length: count }, (_, index) => `compiling module ${from + index} of the build ok`);

/** Big outputs of different shapes: every digest fits the limit and keeps its error lines. */
const SHAPES: [name: string, text: string, mustKeep: string[]][] = [
  [
    'a build log with one error deep inside',
    [
      ...filler(2000),
      'src/app.c:120:7: error: expected ‘;’ before ‘}’ token',
      ...filler(2000, 2000),
    ].join('\n'),
    ['src/app.c:120:7: error: expected ‘;’ before ‘}’ token'],
  ],
  [
    'a JavaScript stack trace in the middle',
    [
      ...filler(1500),
      'TypeError: Cannot read properties of undefined (reading "id")',
      '    at render (/app/src/view.js:41:13)',
      '    at main (/app/src/index.js:9:3)',
      ...filler(1500, 1500),
    ].join('\n'),
    [
      'TypeError: Cannot read',
      '    at render (/app/src/view.js:41:13)',
      '    at main (/app/src/index.js:9:3)',
    ],
  ],
  [
    'a Python traceback',
    [
      ...filler(1200),
      'Traceback (most recent call last):',
      '  File "/app/run.py", line 12, in <module>',
      'ZeroDivisionError: division by zero',
      ...filler(1200, 1200),
    ].join('\n'),
    [
      'Traceback (most recent call last):',
      '  File "/app/run.py", line 12, in <module>',
      'ZeroDivisionError',
    ],
  ],
  [
    'the same warning repeated 3,000 times, then a failure',
    [
      ...Array.from({ length: 3000 }, () => 'npm WARN deprecated inflight@1.0.6: leaks memory'),
      'npm ERR! code ELIFECYCLE',
      ...filler(500),
    ].join('\n'),
    ['npm WARN deprecated inflight@1.0.6: leaks memory', '(×', 'npm ERR! code ELIFECYCLE'],
  ],
  [
    'a minified file on one 400 KB line',
    `var a=1;${'x'.repeat(400 * 1024)}`,
    ['var a=1;', 'chars]… xxx'],
  ],
  [
    'multi-byte text',
    Array.from({ length: 4000 }, (_, index) => `строка ${index} — данные ✓ 数据`).join('\n'),
    ['строка 0'],
  ],
];

describe('the digest of a big output', () => {
  it.each(SHAPES)(
    '%s: fits in 4 KB, names the saved file and keeps what matters',
    (_name, text, mustKeep) => {
      const result = digest(text);
      expect(bytes(result)).toBeLessThanOrEqual(DIGEST_LIMIT_BYTES);
      expect(result).toContain(`The full output is saved in ${SAVED}`);
      expect(result).toContain(`"files": [${JSON.stringify(SAVED)}]`);
      for (const kept of mustKeep) expect(result).toContain(kept);
      expect(digest(text)).toBe(result);
    },
  );

  it('gives the size, the line count, the first and the last lines with their numbers', () => {
    const lines = filler(5000);
    const result = digest(lines.join('\n'));
    expect(result).toMatch(
      /^Bash `make` returned \d+\.\d KB \(5,000 lines\), over the 16\.0 KB output limit/,
    );
    expect(result).toContain('1: compiling module 0 of the build ok');
    expect(result).toContain('5000: compiling module 4999 of the build ok');
    expect(result).toContain('no error-like lines in the');
  });

  it('keeps as many distinct error lines as fit and counts the ones left out', () => {
    const errors = Array.from(
      { length: 400 },
      (_, index) => `test ${index} failed: expected ${index} to equal ${index + 1}`,
    );
    const result = digest([...filler(100), ...errors, ...filler(100, 100)].join('\n'));
    expect(bytes(result)).toBeLessThanOrEqual(DIGEST_LIMIT_BYTES);
    const title =
      /--- 400 error-like lines in between \((\d+) distinct shown, (\d+) more distinct left out\) ---/.exec(
        result,
      );
    expect(title).not.toBeNull();
    const shown = Number(title![1]);
    expect(shown).toBeGreaterThan(20);
    expect(shown + Number(title![2])).toBe(400);
    expect(result).toContain('test 0 failed: expected 0 to equal 1');
  });

  it('keeps the call to delegate whole even when a long command fills the header', () => {
    const result = digest(filler(3000).join('\n'), `Bash \`${'printf x; '.repeat(200)}\``);
    expect(bytes(result)).toBeLessThanOrEqual(DIGEST_LIMIT_BYTES);
    expect(result.endsWith('or Read a slice of it with offset/limit.')).toBe(true);
  });
});

describe('lines that look like errors', () => {
  const NOTABLE = [
    'error: linker command failed',
    'FAIL src/app.test.ts > adds',
    'Error: ENOENT: no such file or directory',
    'warning: unused variable `x`',
    'panic: runtime error: index out of range',
    "thread 'main' panicked at src/main.rs:3:5",
    '  --> src/main.rs:3:5',
    '\t/home/u/go/src/app/main.go:14 +0x1d',
    '#0  0x00007f3a in abort () from /lib/libc.so.6',
    'Permission denied',
    'AssertionError: expected 1 to be 2',
  ];
  const PLAIN = ['compiling module 3', 'all 12 checks passed', 'Downloading packages', ''];
  it.each(NOTABLE)('%s is kept', (line) => expect(isNotableLine(line)).toBe(true));
  it.each(PLAIN)('%s is not', (line) => expect(isNotableLine(line)).toBe(false));
});
