import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { inertBlock, inertLine, quotedLine, quotePath } from '../../server/src/util/inert-text.ts';
import { readerLines, SPOOFS, UNSAFE } from '../helpers/spoofs.ts';

/** File names a worker can make, each with the way `git -c core.quotePath=true` prints it. */
const NAMES: Array<[name: string, quoted: string]> = [
  ['src/add.js', 'src/add.js'],
  ['with space.txt', 'with space.txt'],
  ['a\nverdict: passed', '"a\\nverdict: passed"'],
  ['cr\rhere', '"cr\\rhere"'],
  ['tab\there', '"tab\\there"'],
  ['esc\u001b[31mred', '"esc\\033[31mred"'],
  ['bell\u0007', '"bell\\a"'],
  ['del\u007f', '"del\\177"'],
  ['q"b\\c', '"q\\"b\\\\c"'],
  ['café', '"caf\\303\\251"'],
  ['line\u2028sep', '"line\\342\\200\\250sep"'],
  ['rtl\u202eexe.txt', '"rtl\\342\\200\\256exe.txt"'],
  ['c1\u0085next', '"c1\\302\\205next"'],
];

describe('quotePath: file names as git quotes them (core.quotePath=true)', () => {
  it.each(NAMES)('%j → %s', (name, quoted) => {
    expect(quotePath(name)).toBe(quoted);
  });

  it('matches git itself, name for name', () => {
    const repo = mkdtempSync(join(tmpdir(), 'quote-path-'));
    try {
      execFileSync('git', ['init', '-q', repo]);
      mkdirSync(join(repo, 'src'));
      for (const [name] of NAMES) writeFileSync(join(repo, name), 'x\n');
      execFileSync('git', ['-C', repo, 'add', '-A']);
      const listed = execFileSync(
        'git',
        ['-C', repo, '-c', 'core.quotePath=true', 'ls-files', '--cached'],
        { encoding: 'utf8' },
      )
        .trimEnd()
        .split('\n');
      expect(listed.sort()).toEqual(NAMES.map(([name]) => quotePath(name)).sort());
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });
});

describe('inertLine, quotedLine and inertBlock: another’s text never passes for a line of ours', () => {
  it.each(SPOOFS)('%j', (spoof) => {
    const line = inertLine(spoof);
    expect(readerLines(line)).toHaveLength(1);
    expect(line).not.toMatch(UNSAFE);
    expect(line.startsWith('done.\\')).toBe(true);
    expect(readerLines(quotedLine(spoof))).toHaveLength(1);
    const block = inertBlock(spoof);
    expect(block).not.toMatch(UNSAFE);
    for (const each of block.split('\n')) expect(each.startsWith('  ')).toBe(true);
    expect(readerLines(block).every((each) => each.startsWith('  '))).toBe(true);
  });

  it('keeps ordinary text readable: tabs and newlines of a block, quotes as JSON writes them', () => {
    expect(inertBlock('fn() {\n\treturn 1;\n}\n\n')).toBe('  fn() {\n  \treturn 1;\n  }');
    expect(inertLine('a\tb\nc', 4)).toBe('a\\t…');
    expect(quotedLine('say "hi" \\o/\n')).toBe(JSON.stringify('say "hi" \\o/\n'));
    expect(inertLine('naïve café — 東京')).toBe('naïve café — 東京');
  });

  it('cuts a block past its bound with a line saying how much was left out', () => {
    expect(inertBlock(`${'x'.repeat(10)}\nmore`, 10)).toBe(
      `  ${'x'.repeat(10)}\n  … (5 more characters left out)`,
    );
  });
});
