// The price table of `@pydantic/genai-prices`, taken out of its module for the bundles (the
// build) and for the test that checks bundled prices against the library's own.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * The price table (`@pydantic/genai-prices`) is 800 KB of object literals inside its module: a
 * worker that prices its calls held about 7 MB more while waiting on its model, for the one
 * entry it needed (`npm run bench -- workermemory`). The module is bundled without them, and
 * the table goes beside it as JSON (`chunks/genai-prices.json`), which `bundledPriceTable`
 * reads: server/src/calls/pricing.ts loads it for a lookup and lets it go (only what matched is
 * kept). Markers the library no longer has fail the build.
 */
export const pricesWithoutTable = {
  name: 'prices-without-table',
  setup(pluginBuild) {
    pluginBuild.onLoad(
      { filter: /[\\/]@pydantic[\\/]genai-prices[\\/]dist[\\/]index\.js$/ },
      (args) => {
        const text = readFileSync(args.path, 'utf8');
        const start = 'const E = [';
        const end = text.indexOf('\n], J = ');
        if (!text.startsWith(start) || end < 0) {
          throw new Error(
            `${args.path}: the price table is no longer where prices-without-table looks`,
          );
        }
        return {
          contents: [
            "import { readFileSync as readPriceTable } from 'node:fs';",
            '/** The table this module was built with, read anew at each call (see scripts/price-table.mjs). */',
            'export function bundledPriceTable() {',
            "  return JSON.parse(readPriceTable(new URL('./genai-prices.json', import.meta.url), 'utf8'));",
            '}',
            `const E = [], J = ${text.slice(end + '\n], J = '.length)}`,
          ].join('\n'),
          loader: 'js',
          resolveDir: dirname(args.path),
        };
      },
    );
  },
};

/** The price table the library was built with, as JSON beside its chunk (see pricesWithoutTable). */
export async function writePriceTable(root, folder) {
  const library = join(root, 'node_modules', '@pydantic', 'genai-prices', 'dist', 'index.js');
  const { waitForUpdate } = await import(pathToFileURL(library).href);
  const table = await waitForUpdate();
  if (!Array.isArray(table) || table.length === 0) throw new Error('the price table is empty');
  writeFileSync(join(folder, 'genai-prices.json'), JSON.stringify(table));
}
