/**
 * The PostToolUse output guard's answer to one finished call: the JSON Claude Code reads from a
 * hook (a digest in the tool's own output shape), or undefined to leave the output as it was.
 * Shared by the command hook (`hooks/post-tool-use.ts`) and the server's `hook_answer` tool.
 */
import { resolveDataHome, resolveProjectDir, type Environment } from '../config/paths.ts';
import { largeReadSettings, readRawConfigs } from '../config/read-settings.ts';
import { readTextEnds } from './hook-io.ts';
import { guardOutput, type PostToolUseInput } from './output-guard.ts';
import { saveOutput } from './output-store.ts';

/** Throws on input that is not a hook call (the callers leave the output as it was). */
export function answerPostToolUse(
  input: PostToolUseInput & { cwd?: unknown },
  env: Environment,
): string | undefined {
  const cwd = typeof input.cwd === 'string' ? input.cwd : process.cwd();
  const dataHome = resolveDataHome(env);
  const settings = largeReadSettings(readRawConfigs(dataHome, resolveProjectDir(env, cwd)), env);
  const replacement = guardOutput(input, settings, {
    // Claude Code writes that file itself: a link there is not its own, and is not followed.
    readText: (path) => readTextEnds(path, { followLinks: false }),
    save: (tool, text) => saveOutput(dataHome, tool, text),
  });
  if (replacement === undefined) return undefined;
  return JSON.stringify({
    hookSpecificOutput: { hookEventName: 'PostToolUse', updatedToolOutput: replacement },
  });
}
