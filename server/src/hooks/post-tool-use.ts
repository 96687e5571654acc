/**
 * PostToolUse entry (dist/post-tool-use.cjs): the measured layer of the large-read guard.
 * hooks/post-tool-use.sh starts it only for hook inputs big enough to hold a big output.
 *
 * Failure policy, as for the PreToolUse guard: it must never lose or block work because of
 * its own bug. Malformed input or any error ends in exit 0 with no output, which leaves the
 * tool's output as it was; the error goes to stderr (Claude Code's debug log).
 */
import { resolveDataHome, resolveProjectDir } from '../config/paths.ts';
import { largeReadSettings, readRawConfigs } from '../config/read-settings.ts';
import { readStdin, readTextEnds } from './hook-io.ts';
import { guardOutput, type PostToolUseInput } from './output-guard.ts';
import { saveOutput } from './output-store.ts';

function main(): void {
  const input = JSON.parse(readStdin()) as PostToolUseInput & { cwd?: unknown };
  const env = process.env;
  const cwd = typeof input.cwd === 'string' ? input.cwd : process.cwd();
  const dataHome = resolveDataHome(env);
  const settings = largeReadSettings(readRawConfigs(dataHome, resolveProjectDir(env, cwd)), env);
  const replacement = guardOutput(input, settings, {
    // Claude Code writes that file itself: a link there is not its own, and is not followed.
    readText: (path) => readTextEnds(path, { followLinks: false }),
    save: (tool, text) => saveOutput(dataHome, tool, text),
  });
  if (replacement === undefined) return;
  process.stdout.write(
    JSON.stringify({
      hookSpecificOutput: { hookEventName: 'PostToolUse', updatedToolOutput: replacement },
    }),
  );
}

try {
  main();
} catch (error) {
  process.stderr.write(
    `[delegate] output guard left the output as it was after an error: ${String(error)}\n`,
  );
}
