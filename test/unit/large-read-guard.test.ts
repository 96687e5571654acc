import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LargeReadSettings } from '../../server/src/config/read-settings.ts';
import { windowBytes } from '../../server/src/guard/hook-io.ts';
import { guardLargeRead, type GuardFiles } from '../../server/src/guard/large-read-guard.ts';

/** Files the guard sees: absolute path → size and average line length. */
const FILES = new Map<string, { size: number; lineBytes: number }>([
  ['/proj/big.log', { size: 200_000, lineBytes: 100 }],
  ['/proj/small.txt', { size: 2_000, lineBytes: 40 }],
  ['/proj/one-line.min.js', { size: 300_000, lineBytes: 300_000 }],
  ['/proj/wide.csv', { size: 4_000_000, lineBytes: 4_000 }],
  ['/proj/photo.PNG', { size: 900_000, lineBytes: 900_000 }],
  ['/proj/manual.pdf', { size: 900_000, lineBytes: 900_000 }],
  ['/proj/data.json', { size: 60_000, lineBytes: 60 }],
]);
/** The files above as uniform lines; the real counting is tested on real files below. */
const files: GuardFiles = {
  statFile: (path: string) => FILES.get(path)?.size,
  averageLineBytes: (path: string) => FILES.get(path)?.lineBytes ?? 80,
  windowBytes: (path, { firstLine, lineCount, maxLineBytes }) => {
    const { size = 0, lineBytes = 80 } = FILES.get(path) ?? {};
    const lines = Math.ceil(size / lineBytes);
    return (
      Math.max(0, Math.min(lineCount, lines - firstLine + 1)) * Math.min(lineBytes, maxLineBytes)
    );
  },
};
const SETTINGS: LargeReadSettings = {
  mode: 'deny',
  thresholdBytes: 51_200,
  toolThresholdBytes: {},
  shouldDigest: true,
  allowCommands: [],
};

type Row = [toolInput: Record<string, unknown>, expected: 'allow' | 'deny', note: string];

/** Read calls (Claude Code's Read shows at most 2,000 lines of at most 2,000 chars by default). */
const READ_TABLE: Row[] = [
  [{ file_path: '/proj/big.log' }, 'deny', 'whole read of a 200 KB text file'],
  [{ file_path: '/proj/small.txt' }, 'allow', 'small file'],
  [{ file_path: '/proj/missing.log' }, 'allow', 'missing file: Read reports it itself'],
  [{ file_path: '/proj/big.log', offset: 1, limit: 100 }, 'allow', '100 lines × 100 B = 10 KB'],
  [{ file_path: '/proj/big.log', limit: 1_000 }, 'deny', '1,000 lines × 100 B = 100 KB still over'],
  [{ file_path: '/proj/big.log', offset: 1_990 }, 'allow', 'offset near the end leaves ~10 lines'],
  [
    { file_path: '/proj/big.log', offset: 500 },
    'deny',
    'the 1,500 lines from offset 500 are 150 KB',
  ],
  [{ file_path: '/proj/one-line.min.js' }, 'allow', 'one line, cut at 2,000 chars by Read'],
  [{ file_path: '/proj/wide.csv', limit: 10 }, 'allow', '10 lines cut at 2,000 chars = 20 KB'],
  [{ file_path: '/proj/wide.csv', limit: 100 }, 'deny', '100 lines × 2,000 chars = 200 KB'],
  [{ file_path: '/proj/photo.PNG' }, 'allow', 'images are shown as images'],
  [{ file_path: '/proj/manual.pdf' }, 'allow', 'PDFs are read as documents'],
  [{ file_path: '/proj/data.json' }, 'deny', '60 KB, just over the limit'],
  [{ file_path: 'big.log' }, 'deny', 'relative path resolves against cwd'],
  [{ file_path: 42 }, 'allow', 'malformed input'],
  [{}, 'allow', 'no path'],
];

/** Grep calls: what a search returns is not knowable before it runs; all are measured after. */
const GREP_TABLE: Row[] = [
  [
    { pattern: 'ERROR', path: '/proj/big.log', output_mode: 'content' },
    'allow',
    'content over a big file: may match nothing',
  ],
  [{ pattern: 'ERROR', path: '/proj', output_mode: 'content' }, 'allow', 'a directory'],
  [{ pattern: 'ERROR', output_mode: 'content' }, 'allow', 'no path: the whole project'],
];

describe('large-read guard: Read', () => {
  it.each(READ_TABLE)('%j → %s (%s)', (toolInput, expected) => {
    const decision = guardLargeRead(
      { tool_name: 'Read', tool_input: toolInput, cwd: '/proj' },
      SETTINGS,
      files,
    );
    expect(decision ? 'deny' : 'allow').toBe(expected);
  });
});

describe('large-read guard: Grep', () => {
  it.each(GREP_TABLE)('%j → %s (%s)', (toolInput, expected) => {
    const decision = guardLargeRead(
      { tool_name: 'Grep', tool_input: toolInput, cwd: '/proj' },
      SETTINGS,
      files,
    );
    expect(decision ? 'deny' : 'allow').toBe(expected);
  });
});

describe('large-read guard: reasons and settings', () => {
  it('names the delegate call with the absolute path, the size and a Read slice', () => {
    const decision = guardLargeRead(
      { tool_name: 'Read', tool_input: { file_path: 'big.log' }, cwd: '/proj' },
      SETTINGS,
      files,
    );
    expect(decision?.decision).toBe('deny');
    expect(decision?.reason).toBe(
      '/proj/big.log is 195.3 KB, over the 50.0 KB large-read limit of the delegate plugin, so reading it whole would ' +
        'fill your context. Instead call mcp__plugin_delegate_workers__delegate with {"task": "<what you need from this file>", ' +
        '"files": ["/proj/big.log"]} (the worker reads the file; you get only its answer); or Read a slice with offset/limit ' +
        '(e.g. offset: 1, limit: 512); or Grep it for what you need.',
    );
  });

  it('asks instead of denying in ask mode, and does nothing when off', () => {
    const input = { tool_name: 'Read', tool_input: { file_path: '/proj/big.log' }, cwd: '/proj' };
    expect(guardLargeRead(input, { ...SETTINGS, mode: 'ask' }, files)?.decision).toBe('ask');
    expect(guardLargeRead(input, { ...SETTINGS, mode: 'off' }, files)).toBeUndefined();
    expect(guardLargeRead(input, { ...SETTINGS, thresholdBytes: 300_000 }, files)).toBeUndefined();
  });

  it('ignores other tools', () => {
    expect(
      guardLargeRead(
        { tool_name: 'Write', tool_input: { file_path: '/proj/big.log' } },
        SETTINGS,
        files,
      ),
    ).toBeUndefined();
  });
});

describe('the bytes of a Read window, counted in the file', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'delegate-window-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, lines: string[]) => {
    const path = join(dir, name);
    writeFileSync(path, lines.join('\n'));
    return path;
  };
  const window = (firstLine: number, lineCount: number) => ({
    firstLine,
    lineCount,
    maxLineBytes: 2_000,
  });

  it('finds long lines far down a file whose start is short lines (a sample of the start did not)', () => {
    const path = file('late-wide.log', [
      ...Array.from({ length: 2_000 }, (_, i) => `short ${i}`),
      ...Array.from({ length: 1_000 }, () => 'w'.repeat(1_999)),
    ]);
    expect(windowBytes(path, window(2_001, 1_000), Infinity)).toBe(1_000 * 1_999);
    expect(windowBytes(path, window(1, 100), Infinity)).toBe(
      Array.from({ length: 100 }, (_, i) => `short ${i}`.length).reduce((a, b) => a + b),
    );
    const decision = guardLargeRead(
      { tool_name: 'Read', tool_input: { file_path: path, offset: 2_001, limit: 1_000 } },
      SETTINGS,
      { statFile: (p) => statSync(p).size, averageLineBytes: () => 8, windowBytes },
    );
    expect(decision?.decision).toBe('deny');
  });

  it('cuts each line at the limit, counts a last line without a newline, and stops past stopAbove', () => {
    const path = file('mixed.txt', ['a'.repeat(5_000), 'bb', 'ccc']);
    expect(windowBytes(path, window(1, 3), Infinity)).toBe(2_000 + 2 + 3);
    expect(windowBytes(path, window(3, 10), Infinity)).toBe(3);
    expect(windowBytes(path, window(9, 10), Infinity)).toBe(0);
    expect(windowBytes(path, window(1, 3), 100)).toBeGreaterThan(100);
  });
});
