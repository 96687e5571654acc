/**
 * PreToolUse entry (dist/pre-tool-use.cjs): the large-read guard.
 *
 * Failure policy: the guard saves money; it must never block work because of its own bug.
 * Malformed input, a crash or any unexpected error ends in exit 0 with no output, which
 * Claude Code treats as "no decision" (the call proceeds under the normal permissions); the
 * error goes to stderr, which Claude Code keeps in its debug log. A hook that times out is
 * treated the same way by Claude Code itself.
 */
import { resolveDataHome, resolveProjectDir } from '../config/paths.ts';
import { largeReadSettings, readRawConfigs, thresholdFor } from '../config/read-settings.ts';
import { mayReadBigFile } from './bash-prefilter.ts';
import {
  averageLineBytes,
  readStdin,
  readTextEnds,
  regularFileSize,
  windowBytes,
} from './hook-io.ts';
import { DIGEST_LIMIT_BYTES, digestOutput } from './output-digest.ts';
import { guardLargeRead, type PreToolUseInput } from './large-read-guard.ts';

async function main(): Promise<void> {
  simulateFaultsForTest(process.env);
  const input = JSON.parse(readStdin()) as PreToolUseInput;
  const env = process.env;
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
  if (!decision) return;
  const reason =
    decision.decision === 'deny' && decision.file
      ? withDigest(decision.reason, decision.file, thresholdFor(settings, String(input.tool_name)))
      : decision.reason;
  process.stdout.write(
    JSON.stringify({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: decision.decision,
        permissionDecisionReason: reason,
      },
    }),
  );
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

main().catch((error: unknown) => {
  process.stderr.write(
    `[delegate] large-read guard let the call through after an error: ${String(error)}\n`,
  );
});

/** Lets tests exercise the failure policy: a crash, or a hang longer than the hook timeout. */
function simulateFaultsForTest(env: NodeJS.ProcessEnv): void {
  if (env.DELEGATE_HOOK_CRASH_FOR_TEST === '1') throw new Error('crash requested for a test');
  const hangMs = Number(env.DELEGATE_HOOK_HANG_MS_FOR_TEST ?? 0);
  if (hangMs > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, hangMs);
}
