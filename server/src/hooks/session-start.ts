/**
 * SessionStart entry (dist/session-start.cjs): the briefing. Reads files only — no network,
 * no model call. Any error ends in exit 0 with no output: a missing briefing must never stop
 * a session from starting.
 */
import { realpathSync } from 'node:fs';
import { resolveDataHome, resolveProjectDir } from '../config/paths.ts';
import { briefProfiles, readRawConfigs } from '../config/read-settings.ts';
import { readJobSummaries } from '../store/job-file.ts';
import { readStdin } from '../guard/hook-io.ts';
import { sessionBriefing } from './session-briefing.ts';

try {
  const input = JSON.parse(readStdin() || '{}') as { cwd?: unknown };
  const env = process.env;
  const dataHome = resolveDataHome(env);
  const projectDir = realpathSync(
    resolveProjectDir(env, typeof input.cwd === 'string' ? input.cwd : process.cwd()),
  );
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
  });
  if (briefing) {
    process.stdout.write(
      JSON.stringify({
        hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: briefing },
      }),
    );
  }
} catch (error) {
  process.stderr.write(`[delegate] session briefing skipped after an error: ${String(error)}\n`);
}
