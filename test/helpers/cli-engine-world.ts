// A world for CLI-engine task tests: temp HOME/data home, a git project, a bin folder put first
// on PATH holding the CLIs under test (real ones linked from .cache/, or fake scripts).
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BROKEN_ADD_PROJECT, initRepository } from './git-project.ts';
import { createTempEnv, type TempEnv } from './temp-env.ts';

export interface CliWorld extends TempEnv {
  binDir: string;
  /** Puts `target` on the world's PATH as `name`. */
  linkBinary(name: string, target: string): void;
  /** Writes an executable script `name` into the world's bin folder. */
  writeBinary(name: string, script: string): void;
}

export function createCliWorld(): CliWorld {
  const world = createTempEnv();
  initRepository(world.project, BROKEN_ADD_PROJECT);
  const binDir = join(world.root, 'bin');
  mkdirSync(binDir, { recursive: true });
  world.env.PATH = `${binDir}:${world.env.PATH}`;
  return {
    ...world,
    binDir,
    linkBinary: (name, target) => symlinkSync(target, join(binDir, name)),
    writeBinary: (name, script) => {
      writeFileSync(join(binDir, name), script);
      chmodSync(join(binDir, name), 0o755);
    },
  };
}
