import { mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { notRegularFileError, specialKind, writeRegularFile } from '../../util/regular-file.ts';
import { UserError } from '../../util/user-error.ts';
import { confinePath } from './confine-path.ts';
import { defineWorkerTool } from './define-worker-tool.ts';
import { splitLines } from './file-text.ts';
import { inputObject, requiredString } from './tool-input.ts';
import { plural } from '../../util/plural.ts';

const WRITES_REGULAR = 'file tools write regular files only.';

export const writeFileTool = defineWorkerTool({
  name: 'write_file',
  description:
    'Create or overwrite a file in the task directory with the given content (missing folders are created). ' +
    'To change part of an existing file, prefer edit_file.',
  inputSchema: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'File path, relative to the task directory.' },
      content: { type: 'string', description: 'The complete new content of the file.' },
    },
    required: ['path', 'content'],
    additionalProperties: false,
  },
  isReadOnly: false,
  run: async (input, context) => {
    const fields = inputObject(input, 'write_file');
    const path = requiredString(fields, 'path');
    const content = requiredString(fields, 'content', { allowEmpty: true });
    const file = await confinePath(context.root, path);
    const kind = file.exists ? specialKind(await stat(file.real)) : undefined;
    if (kind === 'a directory') {
      throw new UserError(`${file.display} is a directory; name a file to write.`);
    }
    // Opening a FIFO to write waits for a reader, which never comes.
    if (kind) throw notRegularFileError(file.display, kind, WRITES_REGULAR);
    await mkdir(dirname(file.real), { recursive: true });
    await writeRegularFile(file.real, content, file.display, WRITES_REGULAR);
    const lines = splitLines(content).length;
    return {
      content:
        `${file.exists ? 'Overwrote' : 'Created'} ${file.display}: ` +
        `${Buffer.byteLength(content)} bytes, ${plural(lines, 'line')}.`,
      filesWritten: [file.relativeReal],
    };
  },
});
