import { resolve } from 'node:path';
import type { StatFile } from './classify-bash.ts';

/** Quoting, escapes, expansions and directory changes: only the real parser can read these. */
const NEEDS_PARSER = /["'\\`$]|(?:^|[\s;&|(])(?:cd|pushd)(?:\s|$)/;
const WORD_SEPARATORS = /[\s;&|()<>]+/;

/**
 * A cheap, conservative first look at a Bash command, so the common case (no big file
 * named anywhere) never loads the shell parser: true when the command names an existing
 * file over the threshold, or when it is too clever to tell without parsing.
 */
export function mayReadBigFile(
  command: string,
  cwd: string,
  thresholdBytes: number,
  statFile: StatFile,
): boolean {
  if (NEEDS_PARSER.test(command)) return true;
  return command
    .split(WORD_SEPARATORS)
    .map(valueOf)
    .some((value) => {
      if (value === '') return false;
      const size = statFile(resolve(cwd, value));
      return size !== undefined && size > thresholdBytes;
    });
}

/** The path-like part of a word: `--file=x` and PowerShell `-Path:x` name x; other options none. */
function valueOf(word: string): string {
  const separator = word.search(/[=:]/);
  if (word.startsWith('-')) return separator === -1 ? '' : word.slice(separator + 1);
  return word.includes('=') ? word.slice(word.indexOf('=') + 1) : word;
}
