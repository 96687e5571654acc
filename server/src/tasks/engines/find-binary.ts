import { findOnPath } from '../../util/find-on-path.ts';
import { UserError } from '../../util/user-error.ts';
import type { CliEngine } from './cli-engine.ts';

/** The engine's executable on PATH; a clear error naming the npm package when it is not there. */
export function findBinary(engine: CliEngine, path: string | undefined): string {
  const found = findOnPath(engine.binary, path);
  if (found) return found;
  throw new UserError(
    `The ${engine.format} engine needs the \`${engine.binary}\` command, which is not on the PATH of the ` +
      `delegate server. Install it with \`npm install -g ${engine.npmPackage}\` (then log in: ${engine.loginHint}), ` +
      'restart Claude Code, or use another profile.',
  );
}
