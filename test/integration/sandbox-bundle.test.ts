import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PLUGIN_ROOT } from '../helpers/mcp-server.ts';

const DIST = join(PLUGIN_ROOT, 'dist');

/** Every JavaScript file of the built plugin, with its text. */
function bundles(): { path: string; text: string }[] {
  const files: { path: string; text: string }[] = [];
  for (const folder of [DIST, join(DIST, 'chunks')]) {
    for (const name of readdirSync(folder)) {
      if (!/\.(mjs|cjs)$/.test(name)) continue;
      const path = join(folder, name);
      files.push({ path, text: readFileSync(path, 'utf8') });
    }
  }
  return files;
}

// The OS sandbox library as the build bundles it (scripts/build.mjs): without the TLS
// termination delegate never configures, whose certificate code (node-forge) each task worker
// would otherwise load when its sandbox starts. The sandboxing itself is proven through the same
// bundle by sandbox-escapes.test.ts.
describe('the bundled OS sandbox library', () => {
  it('carries no certificate library', () => {
    const holders = bundles().filter(({ text }) => text.includes('node-forge'));
    expect(holders.map(({ path }) => path)).toEqual([]);
  });

  it('refuses a TLS-terminating config with a clear error, and resets cleanly after', async () => {
    const candidates = bundles().filter(({ text }) => text.includes('isSupportedPlatform'));
    const modules = await Promise.all(
      candidates.map(
        ({ path }) => import(pathToFileURL(path).href) as Promise<Record<string, unknown>>,
      ),
    );
    const library = modules.find((module) => module.SandboxManager !== undefined);
    expect(library).toBeDefined();
    const manager = library?.SandboxManager as {
      initialize: (config: unknown) => Promise<void>;
      reset: () => Promise<void>;
    };
    await expect(
      manager.initialize({
        network: { allowedDomains: [], deniedDomains: [], tlsTerminate: {} },
        filesystem: { denyRead: [], allowWrite: [], denyWrite: [] },
      }),
    ).rejects.toThrow("delegate's OS sandbox does not terminate TLS (network.tlsTerminate)");
    await expect(manager.reset()).resolves.toBeUndefined();
  });
});
