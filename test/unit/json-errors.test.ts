// Every reader of a JSON file the user edits names a syntax error as `file:line:column: …`, the
// place an editor jumps to, instead of JSON.parse's character position.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readClaudeSettings } from '../../server/src/cli/claude-settings.ts';
import { configPath, projectConfigPath } from '../../server/src/config/paths.ts';
import { loadConfig } from '../../server/src/profiles/load-config.ts';
import { readUserConfig } from '../../server/src/profiles/manage-profiles.ts';
import { jsonErrorOffset, positionAt } from '../../server/src/util/json-position.ts';
import { atJsonError, jsonErrorReason } from '../../server/src/util/read-json.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';

let world: TempEnv;
beforeEach(() => {
  world = createTempEnv();
});
afterEach(() => world.cleanup());

/** A broken file, where its first error is (line:column) and the reason printed after it. */
const BROKEN: Array<[name: string, text: string, place: string, reason: RegExp]> = [
  ['a trailing comma', '{\n  "a": 1,\n}\n', '3:1', /^Expected double-quoted property name$/],
  ['a missing comma', '{\n  "a": 1\n  "b": 2\n}\n', '3:3', /^Expected ',' or '}'/],
  ['a comment', '{\n  // mine\n  "a": 1\n}\n', '2:3', /^Expected property name or '}'$/],
  ['a bare word', '{\n  "a": yes\n}\n', '2:8', /^Unexpected token 'y'$/],
  ['an extra comma in a list', '{"a": [1,\n  ,2]}', '2:3', /^Unexpected token ','$/],
  ['text after the object', '{}\n}\n', '2:1', /after the JSON value$/],
  ['a cut-off file', '{\n  "a": {\n', '3:1', /^Expected property name or '}'$/],
  ['a byte-order mark, then an error', '\uFEFF{\n "a" 1}', '2:6', /^Expected ':'/],
  ['a tab inside a string', '{"a": "x\ty"}', '1:9', /^Bad control character/],
  ['a bad escape', '{"a": "\\q"}', '1:9', /^Bad escaped character/],
  ['a bad number', '{"a": 01}', '1:8', /./],
];

describe('where JSON.parse stops: line and column', () => {
  it.each(BROKEN)('%s', (_name, text, place, reason) => {
    let error: unknown;
    try {
      JSON.parse(text.replace(/^\uFEFF/, ''));
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(SyntaxError);
    expect(atJsonError('f.json', text)).toBe(`f.json:${place}`);
    expect(jsonErrorReason(error)).toMatch(reason);
    expect(jsonErrorReason(error)).not.toMatch(/position|is not valid JSON/);
  });

  it('agrees with JSON.parse on the offset whenever it gives one', () => {
    for (const [, text] of BROKEN) {
      const body = text.replace(/^\uFEFF/, '');
      const given = /at position (\d+)/.exec(messageOf(body))?.[1];
      if (given !== undefined) expect(jsonErrorOffset(body)).toBe(Number(given));
    }
  });

  it('finds nothing in valid JSON; counts lines and columns from 1', () => {
    expect(jsonErrorOffset('{"a": [1, -2.5e3, true, null, "x\\u00e9"]}\n')).toBeUndefined();
    expect(atJsonError('f.json', '{}')).toBe('f.json');
    expect(positionAt('ab\ncd', 0)).toEqual({ line: 1, column: 1 });
    expect(positionAt('ab\ncd', 4)).toEqual({ line: 2, column: 2 });
  });
});

describe('every reader of a user-edited JSON file says file:line:column', () => {
  const readers: Array<[name: string, path: () => string, read: (path: string) => unknown]> = [
    ['config.json (loadConfig)', () => configPath(world.dataHome), () => load()],
    ['.claude/delegate.json (loadConfig)', () => projectConfigPath(world.project), () => load()],
    ['config.json (profile edits)', () => configPath(world.dataHome), readUserConfig],
    [
      'Claude Code settings.json',
      () => join(world.home, '.claude', 'settings.json'),
      readClaudeSettings,
    ],
  ];
  const load = () => loadConfig(world.dataHome, world.project, {});

  for (const [reader, pathOf, read] of readers) {
    it.each(BROKEN)(`${reader}: %s`, (_name, text, place) => {
      const path = pathOf();
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, text);
      expect(() => read(path)).toThrow(`${path}:${place}: not valid JSON (`);
    });
  }
});

function messageOf(text: string): string {
  try {
    JSON.parse(text);
    return '';
  } catch (error) {
    return (error as Error).message;
  }
}
