import { describe, expect, it } from 'vitest';
import { cannotRun } from '../../server/src/tasks/verify.ts';

/**
 * What toolchains this machine may not have print when they have nothing to run (recorded
 * from pnpm 9, yarn 1 and cargo 1.95; npm, make, bash and python run for real in
 * test/integration/preflight-cannot-run.test.ts), and runs that must not be taken for them.
 */
const ROWS: Array<[string, number | null, string, string | undefined]> = [
  [
    'pnpm test',
    1,
    ' ERR_PNPM_NO_IMPORTER_MANIFEST_FOUND  No package.json (or package.yaml, or package.json5) was found in "/tmp/pn".',
    'there is no package.json',
  ],
  [
    'pnpm run lint',
    1,
    ' ERR_PNPM_NO_SCRIPT  Missing script: lint\n\nCommand "lint" not found.',
    'package.json has no `lint` script',
  ],
  [
    'yarn test',
    1,
    'yarn run v1.22.22\nwarning package.json: No license field\nerror Command "test" not found.',
    'package.json has no `test` script',
  ],
  [
    'yarn test',
    1,
    'yarn run v1.22.22\nerror Couldn\'t find a package.json file in "/tmp/pn"',
    'there is no package.json',
  ],
  [
    'cargo test',
    101,
    'error: could not find `Cargo.toml` in `/tmp/pn` or any parent directory',
    'there is no Cargo.toml',
  ],
  ['bash ./t.sh', null, '[could not start: spawn bash ENOENT]', 'it could not start'],
  ['weird', 127, '', 'a command it runs is not installed or not on PATH'],
  // Runs, whatever their output says.
  ['npm test', 0, 'npm error Missing script: "lint"', undefined],
  ['npm test', 1, 'sh: 1: helper: not found\n1 failing', undefined],
  ['node test.js', 1, "Error: Cannot find module '/p/test.js'", undefined],
  ['sleep 9', null, '\n[killed after 5 s]', undefined],
];

describe('a test command that cannot run, from what it printed', () => {
  for (const [command, exitCode, outputTail, expected] of ROWS) {
    it(`${command} (exit ${exitCode}) → ${expected ?? 'runs'}`, () => {
      const timedOut = outputTail.includes('killed after');
      expect(
        cannotRun({ command, exitCode, outputTail, ms: 1, ...(timedOut ? { timedOut } : {}) }),
      ).toBe(expected);
    });
  }
});
