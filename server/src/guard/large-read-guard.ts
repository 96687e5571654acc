import { extname, isAbsolute, resolve } from 'node:path';
import { thresholdFor, type LargeReadSettings } from '../config/read-settings.ts';
import type { classifyBash, StatFile } from './classify-bash.ts';
import type { ReadWindow } from './hook-io.ts';
import { bashReason, readReason } from './deny-reason.ts';

/** What Claude Code sends a PreToolUse hook on stdin (the fields the guard reads). */
export interface PreToolUseInput {
  tool_name?: unknown;
  tool_input?: Record<string, unknown>;
  cwd?: unknown;
}

export interface GuardFiles {
  statFile: StatFile;
  /** For the slice the deny message suggests. */
  averageLineBytes(path: string): number;
  /** Bytes a Read of `window` returns, counted until past the window or over `stopAbove`. */
  windowBytes(path: string, window: ReadWindow, stopAbove: number): number;
  /** The shell-command classifier, loaded by the entry only when a Bash call may need it. */
  classifyBash?: typeof classifyBash;
}

export interface GuardDecision {
  decision: 'deny' | 'ask';
  reason: string;
  /** The big file the call would have printed, and how: the entry adds its digest to a denial. */
  file?: { path: string; what: string };
}

/** Claude Code's Read returns at most this many lines when no limit is given. */
const READ_DEFAULT_LINES = 2_000;
/** ...and cuts longer lines at this many characters. */
const READ_MAX_LINE_CHARS = 2_000;
/** Claude Code shows these as images or documents, not as text in the context. */
const NON_TEXT_EXTENSIONS = new Set(
  ['png', 'jpg', 'jpeg', 'gif', 'webp', 'bmp', 'ico', 'tif', 'tiff', 'heic', 'avif', 'pdf'].map(
    (ext) => `.${ext}`,
  ),
);

/**
 * Decides whether a Read or Bash call would provably pour a big file into the context (what
 * it cannot prove, the PostToolUse guard measures after the call).
 * Returns undefined to let the call through (the default for anything not understood).
 */
export function guardLargeRead(
  input: PreToolUseInput,
  settings: LargeReadSettings,
  files: GuardFiles,
): GuardDecision | undefined {
  if (settings.mode === 'off') return undefined;
  const toolInput = input.tool_input ?? {};
  const cwd = typeof input.cwd === 'string' ? input.cwd : process.cwd();
  const found =
    input.tool_name === 'Read'
      ? guardRead(toolInput, cwd, thresholdFor(settings, 'Read'), files)
      : input.tool_name === 'Bash'
        ? guardBash(toolInput, cwd, thresholdFor(settings, 'Bash'), files)
        : undefined;
  return found === undefined ? undefined : { decision: settings.mode, ...found };
}

type Found = Pick<GuardDecision, 'reason' | 'file'>;

function guardRead(
  toolInput: Record<string, unknown>,
  cwd: string,
  threshold: number,
  files: GuardFiles,
): Found | undefined {
  const path = absolutePath(toolInput.file_path, cwd);
  if (!path || NON_TEXT_EXTENSIONS.has(extname(path).toLowerCase())) return undefined;
  const size = files.statFile(path);
  if (size === undefined || size <= threshold) return undefined;
  const window = {
    firstLine: Math.floor(positiveNumber(toolInput.offset) ?? 1),
    lineCount: Math.floor(positiveNumber(toolInput.limit) ?? READ_DEFAULT_LINES),
    maxLineBytes: READ_MAX_LINE_CHARS,
  };
  // Counted in the file itself, not estimated: long lines anywhere in the window count.
  if (files.windowBytes(path, window, threshold) <= threshold) return undefined;
  const lineBytes = files.averageLineBytes(path);
  const sliceLines = Math.max(20, Math.min(READ_DEFAULT_LINES, Math.floor(threshold / lineBytes)));
  return {
    reason: readReason(path, size, threshold, sliceLines),
    file: { path, what: `Read of ${path}` },
  };
}

function guardBash(
  toolInput: Record<string, unknown>,
  cwd: string,
  threshold: number,
  { statFile, classifyBash }: GuardFiles,
): Found | undefined {
  if (typeof toolInput.command !== 'string' || !classifyBash) return undefined;
  const verdict = classifyBash(toolInput.command, { cwd, thresholdBytes: threshold, statFile });
  if (verdict.decision !== 'deny' || !verdict.path) return undefined;
  const reader = verdict.reader ?? 'this command';
  return {
    reason: bashReason(reader, verdict.path, verdict.bytes ?? 0, threshold),
    file: { path: verdict.path, what: `\`${reader}\` of ${verdict.path}` },
  };
}

function absolutePath(value: unknown, cwd: string): string | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  return isAbsolute(value) ? value : resolve(cwd, value);
}

function positiveNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : undefined;
}
