import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { writeFileAtomic } from '../../server/src/util/atomic-write.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';

let world: TempEnv;
beforeEach(() => {
  world = createTempEnv();
});
afterEach(() => world.cleanup());

it('50 writes of one file at once in one process: all land, the file is one of them whole, no temp file is left', async () => {
  const path = join(world.dataHome, 'shared.json');
  const contents = Array.from({ length: 50 }, (_, index) => `write ${index} `.repeat(2_000));
  const results = await Promise.allSettled(contents.map((text) => writeFileAtomic(path, text)));
  expect(results.filter((result) => result.status === 'rejected')).toEqual([]);
  expect(contents).toContain(readFileSync(path, 'utf8'));
  expect(readdirSync(world.dataHome)).toEqual(['shared.json']);
});
