import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findOnPath } from '../../server/src/util/find-on-path.ts';
import { whichSync } from '../../server/src/sandbox/which-sync.ts';

let dir: string;
let savedPath: string | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'delegate-find-on-path-'));
  savedPath = process.env.PATH;
});
afterEach(() => {
  process.env.PATH = savedPath;
  rmSync(dir, { recursive: true, force: true });
});

/** A folder `name` under the test's folder holding `files` (name → executable?). */
function folder(name: string, files: Record<string, boolean | 'folder'>): string {
  const path = join(dir, name);
  mkdirSync(path, { recursive: true });
  for (const [file, kind] of Object.entries(files)) {
    if (kind === 'folder') mkdirSync(join(path, file));
    else {
      writeFileSync(join(path, file), '#!/bin/sh\n');
      chmodSync(join(path, file), kind ? 0o755 : 0o644);
    }
  }
  return path;
}

describe('findOnPath: the program `which` would find, without a process', () => {
  it('takes the first executable regular file in PATH order', () => {
    const a = folder('a', { tool: 'folder' });
    const b = folder('b', { tool: true });
    const c = folder('c', { tool: true });
    expect(findOnPath('tool', [a, b, c].join(delimiter))).toBe(join(b, 'tool'));
    expect(findOnPath('other', [a, b, c].join(delimiter))).toBeUndefined();
    expect(findOnPath('tool', undefined)).toBeUndefined();
  });

  it('never takes a program from a relative folder or the empty entry (the working directory)', () => {
    const here = folder('here', { tool: true });
    const previous = process.cwd();
    process.chdir(here);
    try {
      expect(findOnPath('tool', ['', '.', 'here'].join(delimiter))).toBeUndefined();
    } finally {
      process.chdir(previous);
    }
  });

  it('as the sandbox library asks it (whichSync): a name on PATH, or a path; null when none', () => {
    const bin = folder('bin', { bash: true, data: false });
    process.env.PATH = bin;
    expect(whichSync('bash')).toBe(join(bin, 'bash'));
    expect(whichSync('data')).toBeNull();
    expect(whichSync('missing')).toBeNull();
    expect(whichSync(join(bin, 'bash'))).toBe(join(bin, 'bash'));
    expect(whichSync(join(bin, 'data'))).toBeNull();
    expect(whichSync(bin)).toBeNull();
  });
});
