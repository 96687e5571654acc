import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { collectFiles } from '../../server/src/delegation/collect-files.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';

/**
 * `delegate` sends the output guard's saved outputs from outside the project only from the
 * guard's own real folder: were `<data home>/outputs` a link, any folder it points to (the
 * user's keys, say) would be sent to a worker model.
 */
let world: TempEnv;
beforeEach(() => {
  world = createTempEnv();
});
afterEach(() => world.cleanup());

const outputs = () => join(world.dataHome, 'outputs');

describe('saved outputs are sent only from a real outputs folder', () => {
  it('sends a saved output from the real folder', async () => {
    mkdirSync(outputs(), { mode: 0o700 });
    writeFileSync(join(outputs(), 'out.txt'), 'saved output\n');
    const [file] = await collectFiles([join(outputs(), 'out.txt')], world.project, 1e6, outputs());
    expect(file).toMatchObject({ display: 'saved-outputs/out.txt', text: 'saved output\n' });
  });

  it('refuses a file reached through a linked outputs folder', async () => {
    const keys = join(world.root, 'keys');
    mkdirSync(keys);
    writeFileSync(join(keys, 'id_ed25519'), 'PRIVATE KEY\n');
    symlinkSync(keys, outputs());
    await expect(
      collectFiles([join(outputs(), 'id_ed25519')], world.project, 1e6, outputs()),
    ).rejects.toThrow(/outside the project/);
  });
});
