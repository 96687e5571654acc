/**
 * PreToolUse entry (dist/pre-tool-use.cjs): the large-read guard as a command hook, the path
 * Claude Code takes when delegate's server cannot answer in-process (docs/hooks.md).
 *
 * Failure policy: the guard saves money; it must never block work because of its own bug.
 * Malformed input, a crash or any unexpected error ends in exit 0 with no output, which
 * Claude Code treats as "no decision" (the call proceeds under the normal permissions); the
 * error goes to stderr, which Claude Code keeps in its debug log. A hook that times out is
 * treated the same way by Claude Code itself.
 */
import { answerPreToolUse } from '../guard/pre-tool-answer.ts';
import type { PreToolUseInput } from '../guard/large-read-guard.ts';
import { readStdin } from '../guard/hook-io.ts';

async function main(): Promise<void> {
  simulateFaultsForTest(process.env);
  const answer = await answerPreToolUse(JSON.parse(readStdin()) as PreToolUseInput, process.env);
  if (answer !== undefined) process.stdout.write(answer);
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
