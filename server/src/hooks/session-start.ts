/**
 * SessionStart entry (dist/session-start.cjs): the briefing. Reads files only — no network,
 * no model call. Any error ends in exit 0 with no output: a missing briefing must never stop
 * a session from starting.
 */
import { realpathSync } from 'node:fs';
import { resolveDataHome, resolveProjectDir, type Environment } from '../config/paths.ts';
import { briefProfiles, readRawConfigs } from '../config/read-settings.ts';
import { readJobSummaries, sessionOf } from '../store/job-file.ts';
import { refreshStatusLines } from '../store/refresh-status.ts';
import { linkSession } from '../store/session-links.ts';
import { readStdin } from '../guard/hook-io.ts';
import { sessionBriefing } from './session-briefing.ts';

async function main(): Promise<void> {
  const input = JSON.parse(readStdin() || '{}') as { cwd?: unknown; session_id?: unknown };
  const env = process.env;
  const dataHome = resolveDataHome(env);
  const projectDir = realpathSync(
    resolveProjectDir(env, typeof input.cwd === 'string' ? input.cwd : process.cwd()),
  );
  const given =
    typeof input.session_id === 'string' && input.session_id ? input.session_id : sessionOf(env);
  const configs = readRawConfigs(dataHome, projectDir);
  const defaults = configs
    .map(({ json }) => json.defaultProfile)
    .filter((name) => typeof name === 'string');
  const briefing = sessionBriefing({
    profiles: briefProfiles(configs),
    defaultProfile: defaults.at(-1),
    jobs: readJobSummaries(dataHome),
    projectDir,
    env,
    session: given && (await firstSessionOf(dataHome, env, given)),
  });
  if (briefing) {
    process.stdout.write(
      JSON.stringify({
        hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: briefing },
      }),
    );
  }
}

/**
 * The session id this terminal's Claude Code process started with (its tasks carry it), linked
 * to the one given now so the status line follows after a /clear; the given one on any failure.
 */
async function firstSessionOf(dataHome: string, env: Environment, given: string): Promise<string> {
  try {
    const { first, isChanged } = await linkSession(dataHome, Number(env.CLAUDE_PID), given);
    if (isChanged) await refreshStatusLines(dataHome);
    return first;
  } catch (error) {
    process.stderr.write(`[delegate] session not linked: ${String(error)}\n`);
    return given;
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`[delegate] session briefing skipped after an error: ${String(error)}\n`);
});
