import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { UserError } from '../../util/user-error.ts';
import type { CliEngine } from './cli-engine.ts';

/** The engine's executable on PATH; a clear error naming the npm package when it is not there. */
export function findBinary(engine: CliEngine, path: string | undefined): string {
  for (const dir of (path ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, engine.binary);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // Not in this folder.
    }
  }
  throw new UserError(
    `The ${engine.format} engine needs the \`${engine.binary}\` command, which is not on the PATH of the ` +
      `delegate server. Install it with \`npm install -g ${engine.npmPackage}\` (then log in: ${engine.loginHint}), ` +
      'restart Claude Code, or use another profile.',
  );
}
