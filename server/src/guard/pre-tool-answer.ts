/**
 * The PreToolUse large-read guard's answer to one call: the JSON Claude Code reads from a hook,
 * or undefined for no decision. One function for both paths that ask it: the command hook
 * (`hooks/pre-tool-use.ts`, a process per call) and the server's `hook_answer` tool (an
 * `mcp_tool` hook, in-process), so their decisions cannot differ.
 */
import { resolveDataHome, resolveProjectDir, type Environment } from '../config/paths.ts';
import { largeReadSettings, readRawConfigs, thresholdFor } from '../config/read-settings.ts';
import { mayReadBigFile } from './bash-prefilter.ts';
import { averageLineBytes, readTextEnds, regularFileSize, windowBytes } from './hook-io.ts';
import { DIGEST_LIMIT_BYTES, digestOutput } from './output-digest.ts';
import { guardLargeRead, type PreToolUseInput } from './large-read-guard.ts';

/** Throws on input that is not a hook call (the callers let the call through). */
export async function answerPreToolUse(
  input: PreToolUseInput,
  env: Environment,
): Promise<string | undefined> {
  const cwd = typeof input.cwd === 'string' ? input.cwd : process.cwd();
  const configs = readRawConfigs(resolveDataHome(env), resolveProjectDir(env, cwd));
  const settings = largeReadSettings(configs, env);
  const command = input.tool_name === 'Bash' ? input.tool_input?.command : undefined;
  // The shell parser is most of the guard's code: load it only for commands that may need it.
  const needsParser =
    typeof command === 'string' &&
    mayReadBigFile(command, cwd, thresholdFor(settings, 'Bash'), regularFileSize);
  const decision = guardLargeRead(input, settings, {
    statFile: regularFileSize,
    averageLineBytes: (path) => averageLineBytes(path),
    windowBytes,
    ...(needsParser ? { classifyBash: (await import('./classify-bash.ts')).classifyBash } : {}),
  });
  if (!decision) return undefined;
  const reason =
    decision.decision === 'deny' && decision.file
      ? withDigest(decision.reason, decision.file, thresholdFor(settings, String(input.tool_name)))
      : decision.reason;
  return JSON.stringify({
    hookSpecificOutput: {
      hookEventName: 'PreToolUse',
      permissionDecision: decision.decision,
      permissionDecisionReason: reason,
    },
  });
}

/**
 * A denial that says what the file holds, within the digest's 4 KB in all: its first and last
 * lines and every error-like line, as the measured layer gives for an output that ran, so the
 * supervisor loses nothing by the call not running. Binary files get the reason alone.
 */
function withDigest(
  reason: string,
  file: { path: string; what: string },
  threshold: number,
): string {
  const text = readTextEnds(file.path);
  if (text === undefined || text.slice(0, 8192).includes('\0')) return reason;
  const digest = digestOutput({
    what: file.what,
    text,
    savedPath: file.path,
    isUnread: true,
    thresholdBytes: threshold,
    limitBytes: DIGEST_LIMIT_BYTES - Buffer.byteLength(reason) - 2,
  });
  return `${reason}\n\n${digest}`;
}
