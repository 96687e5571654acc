/**
 * PostToolUse entry (dist/post-tool-use.cjs): the measured layer of the large-read guard.
 * hooks/post-tool-use.sh starts it only for hook inputs big enough to hold a big output.
 *
 * Failure policy, as for the PreToolUse guard: it must never lose or block work because of
 * its own bug. Malformed input or any error ends in exit 0 with no output, which leaves the
 * tool's output as it was; the error goes to stderr (Claude Code's debug log).
 */
import { answerPostToolUse } from '../guard/post-tool-answer.ts';
import type { PostToolUseInput } from '../guard/output-guard.ts';
import { readStdin } from '../guard/hook-io.ts';

function main(): void {
  const answer = answerPostToolUse(JSON.parse(readStdin()) as PostToolUseInput, process.env);
  if (answer !== undefined) process.stdout.write(answer);
}

try {
  main();
} catch (error) {
  process.stderr.write(
    `[delegate] output guard left the output as it was after an error: ${String(error)}\n`,
  );
}
