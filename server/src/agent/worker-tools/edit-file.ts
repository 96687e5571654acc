import { writeRegularFile } from '../../util/regular-file.ts';
import { UserError } from '../../util/user-error.ts';
import { confinePath } from './confine-path.ts';
import { defineWorkerTool } from './define-worker-tool.ts';
import { readTextFile } from './file-text.ts';
import { inputObject, requiredString } from './tool-input.ts';
import { plural } from '../../util/plural.ts';

export const editFileTool = defineWorkerTool({
  name: 'edit_file',
  description:
    'Replace one exact occurrence of old_text with new_text in a file in the task directory. ' +
    'old_text must match the file exactly (whitespace included, no line-number prefixes) and only once.',
  inputSchema: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'File path, relative to the task directory.' },
      old_text: { type: 'string', description: 'Text to replace; must occur exactly once.' },
      new_text: { type: 'string', description: 'Replacement text (may be empty to delete).' },
    },
    required: ['path', 'old_text', 'new_text'],
    additionalProperties: false,
  },
  isReadOnly: false,
  run: async (input, context) => {
    const fields = inputObject(input, 'edit_file');
    const path = requiredString(fields, 'path');
    const oldText = requiredString(fields, 'old_text');
    const newText = requiredString(fields, 'new_text', { allowEmpty: true });
    if (oldText === newText)
      throw new UserError('old_text and new_text are the same; nothing to change.');
    const file = await confinePath(context.root, path);
    const { text, isExactUtf8 } = await readTextFile(file);
    if (!isExactUtf8) {
      throw new UserError(
        `${file.display} is not valid UTF-8, so editing it here would damage it; use run_bash (sed, perl) instead.`,
      );
    }
    const index = findOnce(text, oldText, file.display);
    const edited = text.slice(0, index) + newText + text.slice(index + oldText.length);
    await writeRegularFile(file.real, edited, file.display, 'file tools write regular files only.');
    const line = text.slice(0, index).split('\n').length;
    return {
      content:
        `Edited ${file.display} at line ${line}: ` +
        `replaced ${plural(countLines(oldText), 'line')} with ${plural(countLines(newText), 'line')}.`,
      filesWritten: [file.relativeReal],
    };
  },
});

/** The index of the only occurrence; a clear error for none or several. */
function findOnce(text: string, oldText: string, display: string): number {
  const index = text.indexOf(oldText);
  if (index < 0) {
    const crlf =
      text.includes('\r\n') && !oldText.includes('\r') ? ' The file uses CRLF line endings.' : '';
    throw new UserError(
      `old_text was not found in ${display}; re-read the file (read_file) and copy the text exactly, ` +
        `whitespace included, without the line-number prefixes.${crlf}`,
    );
  }
  let count = 1;
  for (let next = text.indexOf(oldText, index + oldText.length); next >= 0; count += 1) {
    next = text.indexOf(oldText, next + oldText.length);
  }
  if (count > 1) {
    throw new UserError(
      `old_text was found ${count} times in ${display}; include more context (nearby lines) so it matches exactly once.`,
    );
  }
  return index;
}

const countLines = (text: string) => (text === '' ? 0 : text.split('\n').length);
