/**
 * The OS sandbox library's `whichSync`, put in place of its own (`dist/utils/which.js`) when
 * the bundles are built (scripts/build.mjs). Its own starts `which` and waits for it: a task
 * worker did so four times as its sandbox started, beside its first model call, and once more
 * for every command it ran in the sandbox (the shell's path): about 1.5 ms of a blocked worker
 * each, here. This finds the same program on PATH without a process.
 */
import { findOnPath, isExecutableFile } from '../util/find-on-path.ts';

/** The path of `bin` (a name looked up on PATH, or a path), or null when it is not an executable file. */
export function whichSync(bin: string): string | null {
  if (!bin.includes('/')) return findOnPath(bin, process.env.PATH) ?? null;
  return isExecutableFile(bin) ? bin : null;
}
