import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolvePluginRoot } from '../../server/src/config/plugin-root.ts';

const PLUGIN_ROOT = join(import.meta.dirname, '..', '..', 'plugin');

let root: string;

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'delegate-plugin-root-')));
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

describe('resolvePluginRoot', () => {
  it('prefers $CLAUDE_PLUGIN_ROOT', () => {
    const plugin = join(root, 'plugin');
    expect(resolvePluginRoot({ CLAUDE_PLUGIN_ROOT: plugin }, import.meta.url)).toBe(plugin);
  });

  it('finds the folder holding .claude-plugin/plugin.json above the module', () => {
    const plugin = join(root, 'plugin');
    mkdirSync(join(plugin, '.claude-plugin'), { recursive: true });
    writeFileSync(join(plugin, '.claude-plugin', 'plugin.json'), '{}');
    const chunk = pathToFileURL(join(plugin, 'dist', 'chunks', 'agents-abc.mjs')).href;
    expect(resolvePluginRoot({}, chunk)).toBe(plugin);
    // The sources (this test) sit beside the checkout's plugin folder.
    expect(resolvePluginRoot({}, import.meta.url)).toBe(PLUGIN_ROOT);
  });

  it("falls back to the bundle folder's parent", () => {
    const bundle = pathToFileURL(join(root, 'elsewhere', 'dist', 'server.mjs')).href;
    expect(resolvePluginRoot({ CLAUDE_PLUGIN_ROOT: ' ' }, bundle)).toBe(join(root, 'elsewhere'));
  });
});
