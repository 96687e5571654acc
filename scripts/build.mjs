// Bundles every entry point into dist/ (committed: plugin installs run no build).
import { build } from 'esbuild';
import { readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

/** Entry name → source; each becomes dist/<name>.mjs. */
export const ENTRIES = {
  server: 'server/src/main.ts',
};

rmSync(join(root, 'dist'), { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: ENTRIES,
  outdir: 'dist',
  outExtension: { '.js': '.mjs' },
  bundle: true,
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Whitespace and syntax only: readable stack traces in bug reports matter more than bytes.
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'eof',
  define: { __DELEGATE_VERSION__: JSON.stringify(version) },
  // Bundled CommonJS dependencies call require(); ESM has none without this.
  banner: {
    js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
