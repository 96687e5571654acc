import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { placeAnswer, resolveWriteTarget } from '../../server/src/delegation/place-answer.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';

let world: TempEnv;
beforeEach(() => {
  world = createTempEnv();
});
afterEach(() => world.cleanup());

describe('placeAnswer when write_to cannot be written after the call', () => {
  it('keeps the paid-for answer under the data home and leaves no temp file in the project', async () => {
    // A folder appeared where the checked target was: the rename over it fails.
    const checked = await resolveWriteTarget('answer.md', world.project);
    const target = checked.path;
    mkdirSync(target);
    const resultsDir = join(world.dataHome, 'results');
    const text = await placeAnswer('the answer', {
      target: checked,
      resultsDir,
      now: new Date('2026-12-01T12:00:00Z'),
    });
    const [saved] = readdirSync(resultsDir);
    expect(text).toMatch(
      new RegExp(
        `^Could not write the answer to ${target} \\(.+\\); it was saved to ${join(resultsDir, saved!)} instead\\.\\nPreview:\\nthe answer$`,
      ),
    );
    expect(readFileSync(join(resultsDir, saved!), 'utf8')).toBe('the answer');
    expect(readdirSync(world.project)).toEqual(['answer.md']);
    expect(readdirSync(target)).toEqual([]);
  });
});
