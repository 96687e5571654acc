import { describe, expect, it } from 'vitest';
import {
  largeReadSettings,
  type LargeReadSettings,
} from '../../server/src/config/read-settings.ts';
import { DIGEST_LIMIT_BYTES } from '../../server/src/guard/output-digest.ts';
import { guardOutput, type PostToolUseInput } from '../../server/src/guard/output-guard.ts';

const settingsFrom = (largeRead: Record<string, unknown> = {}, env = {}): LargeReadSettings =>
  largeReadSettings([{ file: 'config.json', source: 'config', json: { largeRead } }], env);
const DEFAULTS = settingsFrom();

const ERROR_LINE = 'ERROR: disk quota exceeded while writing /var/data/part-0042';
/** A big output with one error line in its middle. */
const big = (kb: number) => {
  const lines = Array.from({ length: Math.ceil((kb * 1024) / 40) }, (_, i) =>
    `row ${i} value=${i * 7} status=ok`.padEnd(39, '.'),
  );
  lines.splice(Math.floor(lines.length / 2), 0, ERROR_LINE);
  return lines.join('\n');
};
const BIG = big(40);
const SMALL = 'just a few bytes\n';

function run(input: PostToolUseInput, settings = DEFAULTS) {
  const saved: { tool: string; text: string }[] = [];
  const persisted = new Map([
    ['/claude/tool-results/b1.txt', `${BIG}\nstderr: ${ERROR_LINE} (late)`],
  ]);
  const replacement = guardOutput(input, settings, {
    readText: (path) => persisted.get(path),
    save: (tool, text) => {
      saved.push({ tool, text });
      return { path: `/data/outputs/${saved.length}.txt` };
    },
  });
  return { replacement: replacement as any, saved };
}

const bash = (stdout: string, extra: Record<string, unknown> = {}): PostToolUseInput => ({
  tool_name: 'Bash',
  tool_input: { command: 'python3 -c "print(open(\'f\').read())"' },
  tool_response: {
    stdout,
    stderr: '',
    interrupted: false,
    isImage: false,
    noOutputExpected: false,
    ...extra,
  },
});

type Case = [
  name: string,
  input: PostToolUseInput,
  digestOf: (replacement: any) => string | undefined,
];

/** Every tool shape Claude Code 2.1.328 gives a PostToolUse hook (measured with the real CLI). */
const BIG_OUTPUTS: Case[] = [
  ['Bash stdout', bash(BIG), (r) => r.stdout],
  [
    'Bash stderr',
    { ...bash('ok'), tool_response: { stdout: 'ok', stderr: BIG, isImage: false } },
    (r) => r.stdout,
  ],
  [
    'Bash persisted by Claude Code (stdout holds only its start)',
    bash(BIG.slice(0, 30_000), {
      persistedOutputPath: '/claude/tool-results/b1.txt',
      persistedOutputSize: 99_000,
    }),
    (r) => r.stdout,
  ],
  [
    'Read of a window',
    {
      tool_name: 'Read',
      tool_input: { file_path: '/p/app.log', offset: 500 },
      tool_response: {
        type: 'text',
        file: {
          filePath: '/p/app.log',
          content: big(60),
          numLines: 1500,
          startLine: 500,
          totalLines: 9000,
        },
      },
    },
    (r) => r.file.content,
  ],
  [
    'Grep content',
    {
      tool_name: 'Grep',
      tool_input: { pattern: 'row', path: '/p' },
      tool_response: { mode: 'content', numFiles: 0, filenames: [], content: BIG, numLines: 1000 },
    },
    (r) => r.content,
  ],
  [
    'Grep files',
    {
      tool_name: 'Grep',
      tool_input: { pattern: 'x' },
      tool_response: { mode: 'files_with_matches', numFiles: 2, filenames: BIG.split('\n') },
    },
    (r) => r.filenames.join('\n'),
  ],
  [
    'Glob',
    {
      tool_name: 'Glob',
      tool_input: { pattern: '**/*' },
      tool_response: { filenames: BIG.split('\n'), durationMs: 3, numFiles: 9, truncated: false },
    },
    (r) => r.filenames.join('\n'),
  ],
  [
    'WebFetch',
    {
      tool_name: 'WebFetch',
      tool_input: { url: 'http://127.0.0.1/x' },
      tool_response: {
        bytes: 9,
        code: 200,
        codeText: 'OK',
        result: BIG,
        durationMs: 5,
        url: 'http://127.0.0.1/x',
      },
    },
    (r) => r.result,
  ],
  [
    "another server's MCP tool (content blocks)",
    {
      tool_name: 'mcp__github__get_file',
      tool_input: {},
      tool_response: [{ type: 'text', text: BIG }],
    },
    (r) => r[0].text,
  ],
  [
    "another server's MCP tool ({content})",
    {
      tool_name: 'mcp__db__query',
      tool_input: {},
      tool_response: { content: [{ type: 'text', text: BIG }] },
    },
    (r) => r.content[0].text,
  ],
];

describe("the measured layer: big real outputs become digests in the tool's own shape", () => {
  it.each(BIG_OUTPUTS)('%s', (_name, input, digestOf) => {
    const { replacement, saved } = run(input);
    expect(replacement).toBeDefined();
    const digest = digestOf(replacement)!;
    expect(Buffer.byteLength(digest)).toBeLessThanOrEqual(DIGEST_LIMIT_BYTES);
    expect(digest).toContain(ERROR_LINE);
    expect(digest).toMatch(/The full output is saved in \/\S+/);
    // Every other field of the tool's output shape is kept.
    const original = input.tool_response as Record<string, unknown>;
    if (!Array.isArray(original)) {
      for (const key of Object.keys(original).filter((key) => !key.startsWith('persisted'))) {
        expect(replacement).toHaveProperty(key);
      }
    }
    // Saved whole, always as a copy of its own (delegate sends saved outputs, not Claude
    // Code's files); a long Bash output from the file Claude Code saved it to.
    expect(saved.map(({ text }) => text.includes(ERROR_LINE))).toEqual([true]);
    expect(digest).toContain('saved in /data/outputs/1.txt');
    if (JSON.stringify(input).includes('persistedOutputPath')) {
      expect(replacement).not.toHaveProperty('persistedOutputPath');
      expect(saved[0]!.text).toContain('(late)');
    }
  });
});

const LEFT_ALONE: [name: string, input: PostToolUseInput, settings?: LargeReadSettings][] = [
  ['a small Bash output', bash(SMALL)],
  [
    'an output just under 4 KB even with a tiny threshold',
    bash('x'.repeat(4000)),
    settingsFrom({ thresholdKb: 1 }),
  ],
  ['an image', { ...bash(BIG), tool_response: { stdout: BIG, isImage: true } }],
  [
    "delegate's own tools",
    {
      tool_name: 'mcp__plugin_delegate_workers__task_result',
      tool_response: [{ type: 'text', text: BIG }],
    },
  ],
  ['tools it does not know', { tool_name: 'TodoWrite', tool_response: { todos: BIG } }],
  ['an unknown shape', { tool_name: 'Bash', tool_response: BIG }],
  [
    'a Read of an image',
    { tool_name: 'Read', tool_response: { type: 'image', file: { base64: BIG } } },
  ],
  ['everything when mode is off', bash(BIG), settingsFrom({ mode: 'off' })],
  ['everything when digest is false', bash(BIG), settingsFrom({ digest: false })],
  [
    'everything when DELEGATE_LARGE_READ=off',
    bash(BIG),
    settingsFrom({}, { DELEGATE_LARGE_READ: 'off' }),
  ],
  ['a tool whose threshold is 0', bash(BIG), settingsFrom({ toolThresholdKb: { Bash: 0 } })],
  [
    'a tool under its own higher threshold',
    bash(BIG),
    settingsFrom({ toolThresholdKb: { Bash: 64 } }),
  ],
  [
    'an allowed command',
    { ...bash(BIG), tool_input: { command: 'git diff HEAD~1' } },
    settingsFrom({ allowCommands: ['git diff'] }),
  ],
  [
    'a Read under its own higher threshold',
    {
      tool_name: 'Read',
      tool_response: {
        type: 'text',
        file: { filePath: '/p/a.ts', content: big(40), startLine: 1 },
      },
    },
    settingsFrom({ toolThresholdKb: { Read: 50 } }),
  ],
];

describe('outputs left as they are', () => {
  it.each(LEFT_ALONE)('%s', (_name, input, settings) => {
    const { replacement, saved } = run(input, settings);
    expect(replacement).toBeUndefined();
    expect(saved).toEqual([]);
  });

  it('an allow-list entry is a whole-word prefix: `git diffx` is not `git diff`', () => {
    const settings = settingsFrom({ allowCommands: ['git diff'] });
    expect(
      run({ ...bash(BIG), tool_input: { command: 'git diffx' } }, settings).replacement,
    ).toBeDefined();
  });

  it('the default threshold is 16 KB: 17 KB is digested, 15 KB is not', () => {
    expect(run(bash(big(17))).replacement).toBeDefined();
    expect(run(bash(big(15))).replacement).toBeUndefined();
  });
});
