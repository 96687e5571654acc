import { thresholdFor, type LargeReadSettings } from '../config/read-settings.ts';
import { DIGEST_LIMIT_BYTES, digestOutput } from './output-digest.ts';
import type { SavedOutput } from './output-store.ts';

/** What Claude Code sends a PostToolUse hook on stdin (the fields the guard reads). */
export interface PostToolUseInput {
  tool_name?: unknown;
  tool_input?: Record<string, unknown>;
  tool_response?: unknown;
}

export interface OutputFiles {
  /**
   * The text of a file Claude Code saved a big output to; undefined when unreadable or not a
   * regular file (a FIFO or a device there must neither block nor flood the hook).
   */
  readText(path: string): string | undefined;
  /** Saves a full output; returns where, or why it was not saved. */
  save(tool: string, text: string): SavedOutput;
}

/** A tool's output as text, and how to put a digest back in the tool's own output shape. */
interface MeasuredOutput {
  /** The settings key of its threshold: the tool's name, or `mcp` for other servers' tools. */
  kind: string;
  what: string;
  text: string;
  firstLine?: number;
  withDigest(digest: string): unknown;
}

/** Our own tools answer within bounds already; digesting them would hide their answers. */
const OWN_TOOLS = 'mcp__plugin_delegate_workers__';
const MAX_WHAT_CHARS = 200;

type Record_ = Record<string, unknown>;
const isRecord = (value: unknown): value is Record_ =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
const bytes = (value: string) => Buffer.byteLength(value, 'utf8');
const quoted = (value: unknown) => JSON.stringify(text(value) ?? '').slice(0, MAX_WHAT_CHARS);

/**
 * The measured layer of the large-read guard: when a tool really returned more than its
 * threshold, the whole output is kept on disk and the supervisor gets a digest of at most
 * 4 KB in the tool's own output shape. Returns the replacement, or undefined to leave the
 * output as it is (small, allowed, unknown shape, or the guard is off).
 */
export function guardOutput(
  input: PostToolUseInput,
  settings: LargeReadSettings,
  files: OutputFiles,
): unknown {
  if (!settings.shouldDigest) return undefined;
  const output = measure(input, files);
  if (!output) return undefined;
  const threshold = thresholdFor(settings, output.kind);
  if (threshold === 0 || bytes(output.text) <= Math.max(threshold, DIGEST_LIMIT_BYTES)) {
    return undefined;
  }
  if (output.kind === 'Bash' && isAllowedCommand(input.tool_input?.command, settings.allowCommands))
    return undefined;
  // Always a copy of its own: `delegate` sends saved outputs (and project files) only, and
  // Claude Code's own saved outputs and files read outside the project are neither.
  const saved = files.save(output.kind, output.text);
  return output.withDigest(
    digestOutput({
      what: output.what,
      text: output.text,
      ...('path' in saved ? { savedPath: saved.path } : { notSavedWhy: saved.refusal }),
      thresholdBytes: threshold,
      ...(output.firstLine ? { firstLine: output.firstLine } : {}),
    }),
  );
}

function isAllowedCommand(command: unknown, allowed: readonly string[]): boolean {
  if (typeof command !== 'string') return false;
  const trimmed = command.trim();
  return allowed.some((prefix) => trimmed === prefix || trimmed.startsWith(`${prefix} `));
}

function measure(input: PostToolUseInput, files: OutputFiles): MeasuredOutput | undefined {
  const name = text(input.tool_name);
  const toolInput = input.tool_input ?? {};
  const response = input.tool_response;
  if (name === undefined) return undefined;
  if (name.startsWith('mcp__')) return name.startsWith(OWN_TOOLS) ? undefined : mcp(name, response);
  if (!isRecord(response)) return undefined;
  switch (name) {
    case 'Bash':
      return bash(toolInput, response, files);
    case 'Read':
      return read(response);
    case 'Grep':
      return listing(
        'Grep',
        `Grep ${quoted(toolInput.pattern)} in ${quoted(toolInput.path ?? '.')}`,
        response,
      );
    case 'Glob':
      return listing('Glob', `Glob ${quoted(toolInput.pattern)}`, response);
    case 'WebFetch': {
      const result = text(response.result);
      if (result === undefined) return undefined;
      return {
        kind: name,
        what: `WebFetch of ${quoted(toolInput.url)}`,
        text: result,
        withDigest: (digest) => ({ ...response, result: digest }),
      };
    }
    default:
      return undefined;
  }
}

/**
 * Bash gives `{stdout, stderr, …}`; past ~30,000 characters Claude Code keeps the whole output
 * in `persistedOutputPath` and `stdout` holds only its start, so the digest is made from that
 * file (errors are often at the end) and points to it.
 */
function bash(
  toolInput: Record_,
  response: Record_,
  files: OutputFiles,
): MeasuredOutput | undefined {
  if (response.isImage === true) return undefined;
  const persisted = text(response.persistedOutputPath);
  const whole = persisted === undefined ? undefined : files.readText(persisted);
  const stdout = text(response.stdout) ?? '';
  const stderr = text(response.stderr) ?? '';
  const output = whole ?? (stderr === '' ? stdout : `${stdout}\n${stderr}`);
  // Without these, Claude Code shows `stdout` (the digest) instead of its own preview.
  const shape = Object.fromEntries(
    Object.entries(response).filter(([key]) => !key.startsWith('persistedOutput')),
  );
  return {
    kind: 'Bash',
    what: `Bash \`${(text(toolInput.command) ?? '').slice(0, MAX_WHAT_CHARS)}\``,
    text: output,
    withDigest: (digest) => ({ ...shape, stdout: digest, stderr: '' }),
  };
}

/** Read gives `{type: 'text', file: {filePath, content, startLine, …}}`; images and notebooks are left alone. */
function read(response: Record_): MeasuredOutput | undefined {
  const file = response.file;
  if (response.type !== 'text' || !isRecord(file)) return undefined;
  const content = text(file.content);
  const path = text(file.filePath);
  if (content === undefined || path === undefined) return undefined;
  const startLine = typeof file.startLine === 'number' ? file.startLine : 1;
  const lines = typeof file.numLines === 'number' ? file.numLines : undefined;
  return {
    kind: 'Read',
    what: `Read of ${path}${lines ? ` (lines ${startLine}–${startLine + lines - 1})` : ''}`,
    text: content,
    firstLine: startLine,
    withDigest: (digest) => ({
      ...response,
      file: { ...file, content: digest, numLines: digest.split('\n').length },
    }),
  };
}

/** Grep and Glob give matched text in `content`, or matched paths in `filenames`. */
function listing(kind: string, what: string, response: Record_): MeasuredOutput | undefined {
  const content = text(response.content);
  if (content !== undefined) {
    return {
      kind,
      what,
      text: content,
      withDigest: (digest) => ({ ...response, content: digest }),
    };
  }
  const filenames = response.filenames;
  if (!Array.isArray(filenames) || !filenames.every((name) => typeof name === 'string')) {
    return undefined;
  }
  return {
    kind,
    what,
    text: filenames.join('\n'),
    withDigest: (digest) => ({ ...response, filenames: digest.split('\n') }),
  };
}

/** Other servers' tools give content blocks; the text ones are digested, the rest kept. */
function mcp(name: string, response: unknown): MeasuredOutput | undefined {
  const blocks: unknown[] | undefined = Array.isArray(response)
    ? response
    : isRecord(response) && Array.isArray(response.content)
      ? response.content
      : undefined;
  if (!blocks) return undefined;
  const texts = blocks.filter((block) => isRecord(block) && block.type === 'text');
  if (texts.length === 0) return undefined;
  const others = blocks.filter((block) => !texts.includes(block));
  const whole = texts.map((block) => text((block as Record_).text) ?? '').join('\n');
  const withDigest = (digest: string) => {
    const content = [{ type: 'text', text: digest }, ...others];
    return Array.isArray(response) ? content : { ...(response as Record_), content };
  };
  return { kind: 'mcp', what: name, text: whole, withDigest };
}
