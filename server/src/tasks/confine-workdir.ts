import { realpathSync, statSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { isGitMetadata, isOutside } from '../agent/worker-tools/confine-path.ts';
import { UserError } from '../util/user-error.ts';

/**
 * The real path of a `workdir` argument: an existing directory under the project (links
 * followed), never git metadata. Tasks and the agent lookup take the same rule.
 */
export function confineWorkdir(project: string, workdir: string): string {
  const label = `workdir ${JSON.stringify(workdir)}`;
  if (workdir.includes('\0')) {
    throw new UserError(`${label} contains a NUL byte; name a directory under the project.`);
  }
  let real: string;
  try {
    real = realpathSync(resolve(project, workdir));
  } catch {
    throw new UserError(
      `${label} does not exist under the project (${project}). Name an existing directory, or omit workdir.`,
    );
  }
  const fromProject = relative(project, real);
  if (isOutside(fromProject)) {
    throw new UserError(
      `${label} resolves to ${real}, outside the project (${project}). Name a directory under the project, or omit workdir.`,
    );
  }
  if (isGitMetadata(relative(project, resolve(project, workdir))) || isGitMetadata(fromProject)) {
    throw new UserError(`${label} is git metadata (.git). Name a directory of the project.`);
  }
  if (!statSync(real).isDirectory()) {
    throw new UserError(
      `${label} is not a directory (${real}). Name the directory to work in, or omit workdir.`,
    );
  }
  return real;
}
