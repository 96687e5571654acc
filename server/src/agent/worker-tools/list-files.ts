import { relative } from 'node:path';
import { realpath } from 'node:fs/promises';
import { defineWorkerTool } from './define-worker-tool.ts';
import { confinePattern, globFiles, loadFastGlob } from './glob-files.ts';
import { inputObject, requiredString } from './tool-input.ts';
import { plural } from '../../util/plural.ts';

const MAX_FILES = 500;

export const listFilesTool = defineWorkerTool({
  name: 'list_files',
  description:
    'List files in the task directory matching a glob (e.g. "src/**/*.ts", "*.md", "**/*test*"), ' +
    'sorted, relative to the task directory; .git and node_modules are skipped; at most 500.',
  inputSchema: {
    type: 'object',
    properties: {
      pattern: {
        type: 'string',
        description: 'Glob, relative to the task directory ("**/*" for everything).',
      },
    },
    required: ['pattern'],
    additionalProperties: false,
  },
  isReadOnly: true,
  run: async (input, context) => {
    const pattern = requiredString(inputObject(input, 'list_files'), 'pattern');
    const root = await realpath(context.root);
    const files = await globFiles(confinePattern(pattern, root, 'pattern'), root);
    if (files.length === 0) {
      const hint = (await loadFastGlob()).isDynamicPattern(pattern)
        ? ''
        : ` Patterns match files, not folders: try "${pattern.replace(/\/$/, '')}/**".`;
      return { content: `No files match "${pattern}" in the task directory.${hint}` };
    }
    const shown = files.slice(0, MAX_FILES).map((file) => relative(root, file));
    if (files.length > MAX_FILES) {
      shown.push(
        `[… ${plural(files.length, 'file')} match; only the first ${MAX_FILES} are listed. Narrow the pattern to see the rest …]`,
      );
    }
    return { content: shown.join('\n') };
  },
});
