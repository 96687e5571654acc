import { stat } from 'node:fs/promises';
import { relative } from 'node:path';
import { notRegularFileError, readRegularFile, specialKind } from '../../util/regular-file.ts';
import { errorMessage, UserError } from '../../util/user-error.ts';
import { confinePath, type ConfinedPath } from './confine-path.ts';
import { defineWorkerTool } from './define-worker-tool.ts';
import { isBinary, ONLY_REGULAR } from './file-text.ts';
import { confinePattern, globFiles } from './glob-files.ts';
import { inputObject, optionalString, requiredString } from './tool-input.ts';
import { plural } from '../../util/plural.ts';

const MAX_MATCHES = 200;
const MAX_OUTPUT_BYTES = 30 * 1024;
const MAX_LINE_CHARS = 500;
/** Bigger files are data or bundles; searching them costs seconds and floods the output. */
const MAX_FILE_BYTES = 5 * 1024 * 1024;

export const grepTool = defineWorkerTool({
  name: 'grep',
  description:
    'Search file contents with a JavaScript regular expression (write /…/i to ignore case). ' +
    'Returns `path:line:text` per matching line, at most 200. Searches the task directory or `path` ' +
    '(a file or folder), optionally only files matching `glob`; binaries, .git and node_modules are skipped.',
  inputSchema: {
    type: 'object',
    properties: {
      pattern: {
        type: 'string',
        description: 'JavaScript regular expression, e.g. "function \\w+Tool".',
      },
      path: {
        type: 'string',
        description: 'File or folder to search, relative to the task directory (default: all).',
      },
      glob: {
        type: 'string',
        description: 'Only files matching this glob, e.g. "*.ts" or "src/**/*.py".',
      },
    },
    required: ['pattern'],
    additionalProperties: false,
  },
  isReadOnly: true,
  run: async (input, context) => {
    const fields = inputObject(input, 'grep');
    const pattern = requiredString(fields, 'pattern');
    const regex = compilePattern(pattern);
    const where = await confinePath(context.root, optionalString(fields, 'path') ?? '.');
    const glob = optionalString(fields, 'glob');
    const files = await filesToSearch(where, glob);
    const found = await searchFiles(files, regex, where.root, context.signal);
    return { content: formatFound(found, pattern, where.display, glob) };
  },
});

/** A plain pattern, or `/source/flags` when flags are given (the only way to ask for `i`). */
function compilePattern(pattern: string): RegExp {
  const literal = /^\/(.+)\/([imsu]+)$/s.exec(pattern);
  try {
    return literal ? new RegExp(literal[1] ?? '', literal[2]) : new RegExp(pattern);
  } catch (error) {
    throw new UserError(
      `The pattern is not a valid JavaScript regular expression (${errorMessage(error)}). ` +
        'Escape special characters such as ( [ { . * + ? with a backslash to match them literally.',
    );
  }
}

async function filesToSearch(where: ConfinedPath, glob: string | undefined): Promise<string[]> {
  if (!where.exists) throw new UserError(`${where.display} does not exist.`);
  const kind = specialKind(await stat(where.real));
  if (kind === undefined) return [where.real];
  if (kind !== 'a directory') throw notRegularFileError(where.display, kind, ONLY_REGULAR);
  const pattern = glob === undefined ? '**' : confinePattern(glob, where.real, 'glob');
  return globFiles(pattern, where.real, { isBaseNameMatch: true });
}

interface Found {
  lines: string[];
  isCut: boolean;
  filesSearched: number;
  filesTooBig: number;
}

async function searchFiles(
  files: readonly string[],
  regex: RegExp,
  root: string,
  signal: AbortSignal | undefined,
): Promise<Found> {
  const found: Found = { lines: [], isCut: false, filesSearched: 0, filesTooBig: 0 };
  let bytes = 0;
  for (const file of files) {
    if (signal?.aborted) throw new UserError('grep was cancelled.');
    const text = await readSearchable(file, found);
    if (text === undefined) continue;
    for (const [index, line] of text.split('\n').entries()) {
      if (!regex.test(line)) continue;
      const entry = `${relative(root, file)}:${index + 1}:${cutLine(line)}`;
      bytes += Buffer.byteLength(entry) + 1;
      if (found.lines.length >= MAX_MATCHES || bytes > MAX_OUTPUT_BYTES) {
        found.isCut = true;
        return found;
      }
      found.lines.push(entry);
    }
  }
  return found;
}

/** The file's text, or undefined for binaries, files too big and files that cannot be read. */
async function readSearchable(file: string, found: Found): Promise<string | undefined> {
  try {
    if ((await stat(file)).size > MAX_FILE_BYTES) {
      found.filesTooBig += 1;
      return undefined;
    }
    // A FIFO or device in the tree is skipped at once (refused on the descriptor), never waited on.
    const buffer = await readRegularFile(file, file);
    found.filesSearched += 1;
    return isBinary(buffer) ? undefined : buffer.toString('utf8');
  } catch {
    return undefined;
  }
}

function cutLine(line: string): string {
  const text = line.endsWith('\r') ? line.slice(0, -1) : line;
  return text.length > MAX_LINE_CHARS ? `${text.slice(0, MAX_LINE_CHARS)} [… line cut …]` : text;
}

function formatFound(found: Found, pattern: string, display: string, glob?: string): string {
  const scope =
    (display === '.' ? 'the task directory' : display) +
    (glob === undefined ? '' : ` (files matching "${glob}")`);
  const notes: string[] = [];
  if (found.isCut) {
    notes.push(
      `[… stopped after ${found.lines.length} matches (limit ${MAX_MATCHES} matches or 30 KB); ` +
        'more exist — narrow the pattern, path or glob …]',
    );
  }
  if (found.filesTooBig > 0) {
    notes.push(
      `[${plural(found.filesTooBig, 'file')} over 5 MB ${found.filesTooBig === 1 ? 'was' : 'were'} not searched; use run_bash for those]`,
    );
  }
  if (found.lines.length === 0) {
    const count = `${plural(found.filesSearched, 'file')} searched`;
    return [`No matches for ${pattern} in ${scope} (${count}).`, ...notes].join('\n');
  }
  return [...found.lines, ...notes].join('\n');
}
