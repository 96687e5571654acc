import { UserError } from '../../util/user-error.ts';
import { confinePath } from './confine-path.ts';
import { defineWorkerTool } from './define-worker-tool.ts';
import { readTextFile, splitLines } from './file-text.ts';
import { inputObject, optionalNumber, requiredString } from './tool-input.ts';
import { plural } from '../../util/plural.ts';

const DEFAULT_LIMIT = 2_000;
/** A slice past this is cut, so one call cannot flood the model's context. */
const MAX_SLICE_BYTES = 60 * 1024;
/** A single line longer than the whole slice (minified code) is shown up to here. */
const MAX_LINE_CHARS = 20_000;

export const readFileTool = defineWorkerTool({
  name: 'read_file',
  description:
    'Read a text file in the task directory. Returns numbered lines (like `cat -n`), ' +
    '2,000 lines from `offset` unless `limit` says otherwise; page through longer files with offset.',
  inputSchema: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'File path, relative to the task directory.' },
      offset: {
        type: 'integer',
        minimum: 1,
        description: 'First line to show, 1-based (default 1).',
      },
      limit: { type: 'integer', minimum: 1, description: 'How many lines to show (default 2000).' },
    },
    required: ['path'],
    additionalProperties: false,
  },
  isReadOnly: true,
  run: async (input, context) => {
    const fields = inputObject(input, 'read_file');
    const path = requiredString(fields, 'path');
    const offset = optionalNumber(fields, 'offset', { min: 1, isInteger: true }) ?? 1;
    const limit = optionalNumber(fields, 'limit', { min: 1, isInteger: true }) ?? DEFAULT_LIMIT;
    const file = await confinePath(context.root, path);
    const { text } = await readTextFile(file);
    return { content: formatSlice(file.display, splitLines(text), offset, limit) };
  },
});

/** `path: lines A–B of N`, then `cat -n` lines; cut loudly once the slice passes 60 KB. */
export function formatSlice(
  display: string,
  lines: readonly string[],
  offset: number,
  limit: number,
): string {
  const total = lines.length;
  if (total === 0) return `${display}: empty file (0 lines)`;
  if (offset > total) {
    throw new UserError(
      `offset ${offset} is past the end of ${display}, which has ${plural(total, 'line')}.`,
    );
  }
  const end = Math.min(total, offset + limit - 1);
  const width = Math.max(6, String(end).length);
  const shown: string[] = [];
  let bytes = 0;
  let note = '';
  for (let number = offset; number <= end; number += 1) {
    let line = `${String(number).padStart(width)}\t${lines[number - 1] ?? ''}`;
    const size = Buffer.byteLength(line) + 1;
    if (bytes + size > MAX_SLICE_BYTES) {
      if (shown.length > 0) {
        note = `[… output cut at 60 KB after line ${number - 1}; read on with offset ${number} …]`;
        break;
      }
      line = `${line.slice(0, MAX_LINE_CHARS)} [… line ${number} cut at ${MAX_LINE_CHARS} characters; see the rest with run_bash (cut -c, head -c) …]`;
    }
    shown.push(line);
    bytes += size;
  }
  const last = offset + shown.length - 1;
  const header = `${display}: lines ${offset}–${last} of ${total}`;
  return [header, ...shown, ...(note ? [note] : [])].join('\n');
}
