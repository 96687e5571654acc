import { statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Environment } from './paths.ts';

/**
 * The plugin root (it holds workers/, statusline/, .claude-plugin/): `$CLAUDE_PLUGIN_ROOT`,
 * else the nearest folder above the entry module that holds `.claude-plugin/plugin.json`
 * (so code-split chunks work too) or, for the sources in a checkout, whose `plugin/` folder
 * does; else the parent of the module's folder (`<root>/dist/server.mjs` → `<root>`). Each
 * entry works it out once and passes it down.
 */
export function resolvePluginRoot(env: Environment, moduleUrl: string): string {
  const fromEnv = env.CLAUDE_PLUGIN_ROOT?.trim();
  if (fromEnv) return resolve(fromEnv);
  const moduleDir = dirname(fileURLToPath(moduleUrl));
  for (let dir = moduleDir; dirname(dir) !== dir; dir = dirname(dir)) {
    if (isFile(join(dir, '.claude-plugin', 'plugin.json'))) return dir;
    if (isFile(join(dir, 'plugin', '.claude-plugin', 'plugin.json'))) return join(dir, 'plugin');
  }
  return dirname(moduleDir);
}

function isFile(path: string): boolean {
  try {
    // No exception for a missing path: building one costs the start more than the stat.
    return statSync(path, { throwIfNoEntry: false })?.isFile() ?? false;
  } catch {
    return false;
  }
}
