// Bundles every entry point into plugin/dist/ (committed: plugin installs run no build).
import { build } from 'esbuild';
import { cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { toolsListOf } from './built-server.mjs';
import { pricesWithoutTable, writePriceTable } from './price-table.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

/**
 * Long-lived processes: ESM, lazy parts split off. Each build shares chunks among its own
 * entries only. The server is built alone so that what it loads at start-up is its own file and
 * the few chunks its lazy parts share, not the dozens of small chunks code shared with the worker
 * and the CLI is cut into: each module the ESM loader reads costs its start (about 8 ms of
 * 125 ms measured, `npm run bench -- serverstart`).
 */
const ESM_BUILDS = [
  { server: 'server/src/main.ts' },
  { 'task-worker': 'server/src/tasks/worker-main.ts', cli: 'server/src/cli/main.ts' },
];

/**
 * Hooks start once per tool call, so every millisecond shows: CommonJS (no ESM loader), one
 * file each, and the shell parser (most of the guard's code) in a file of its own that the
 * guard requires only for Bash commands that may need it.
 */
const HOOK_ENTRIES = {
  'pre-tool-use': 'server/src/hooks/pre-tool-use.ts',
  'post-tool-use': 'server/src/hooks/post-tool-use.ts',
  'session-start': 'server/src/hooks/session-start.ts',
  'classify-bash': 'server/src/guard/classify-bash.ts',
};

/** The guard's lazy `import('./classify-bash.ts')` becomes a require of the sibling bundle. */
const classifierAsSibling = {
  name: 'classifier-as-sibling',
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^\.\/classify-bash\.ts$/ }, (args) =>
      args.importer.endsWith('pre-tool-answer.ts')
        ? { path: './classify-bash.cjs', external: true }
        : undefined,
    );
  },
};

const shared = {
  absWorkingDir: root,
  outdir: 'plugin/dist',
  bundle: true,
  platform: 'node',
  target: 'node20',
  // Whitespace and syntax only: readable stack traces in bug reports matter more than bytes.
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'eof',
  define: { __DELEGATE_VERSION__: JSON.stringify(version) },
  logLevel: 'warning',
};

/**
 * zod re-exports every locale as a namespace (`z.locales`), which defeats tree-shaking and
 * puts ~40 languages of error messages into the server's start-up path. Messages are English
 * (zod's default); keep only that locale.
 */
const englishOnlyZodLocales = {
  name: 'english-only-zod-locales',
  setup(pluginBuild) {
    pluginBuild.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, (args) => ({
      contents: "export { default as en } from './en.js';",
      resolveDir: dirname(args.path),
    }));
  },
};

/**
 * The OS sandbox library terminates TLS only when its config has `network.tlsTerminate`, which
 * delegate never sets (sandbox/sandbox-session.ts); the CA code behind it is node-forge, about
 * 375 KB loaded in every task worker as its sandbox starts: 10 ms and 1.5 MB resident per
 * worker for nothing (measured). Its two modules become one that says so if ever called; their
 * disposers, which the library calls only for a CA it made, do nothing. An export the library
 * starts importing that is missing here fails this build.
 */
const sandboxWithoutTlsTermination = {
  name: 'sandbox-without-tls-termination',
  setup(pluginBuild) {
    pluginBuild.onLoad(
      {
        filter:
          /[\\/]@anthropic-ai[\\/]sandbox-runtime[\\/]dist[\\/]sandbox[\\/]mitm-(ca|leaf)\.js$/,
      },
      () => ({
        contents: [
          'const unavailable = () => {',
          '  throw new Error("delegate\'s OS sandbox does not terminate TLS (network.tlsTerminate)");',
          '};',
          "export const CRL_PATH = '/srt.crl';",
          ...[
            'caSubjectKeyId',
            'signCertificateNative',
            'rsaSha256SignNative',
            'createMitmCA',
            'generateEmptyCrl',
            'generateCa',
            'certThumbprint',
            'validateCaPair',
            'randomSerial',
            'daysFromNow',
            'mintLeafCert',
            'secureContextFor',
          ].map((name) => `export const ${name} = unavailable;`),
          'export async function disposeMitmCA() {}',
          'export function disposeMitmCASync() {}',
        ].join('\n'),
        loader: 'js',
      }),
    );
  },
};

/**
 * The OS sandbox library finds programs by starting `which` and waiting for it, four times as
 * a worker's sandbox starts and once per sandboxed command; server/src/sandbox/which-sync.ts
 * finds them without a process and takes its place.
 */
const sandboxWhichWithoutProcess = {
  name: 'sandbox-which-without-process',
  setup(pluginBuild) {
    pluginBuild.onLoad(
      { filter: /[\\/]@anthropic-ai[\\/]sandbox-runtime[\\/]dist[\\/]utils[\\/]which\.js$/ },
      () => ({
        contents: `export { whichSync } from ${JSON.stringify(join(root, 'server', 'src', 'sandbox', 'which-sync.ts'))};`,
        loader: 'js',
        resolveDir: root,
      }),
    );
  },
};

/** The replacement took: no bundle starts `which` (a library that moved its helper fails the build). */
function checkNoWhichProcess() {
  const chunks = join(root, 'plugin', 'dist', 'chunks');
  for (const name of readdirSync(chunks)) {
    if (/spawnSync\d*\(\s*["']which["']/.test(readFileSync(join(chunks, name), 'utf8'))) {
      throw new Error(
        `plugin/dist/chunks/${name} still starts \`which\`: see sandboxWhichWithoutProcess.`,
      );
    }
  }
}

/**
 * The OS sandbox library (bundled into a lazy chunk) looks for its prebuilt helpers in
 * `vendor/` beside its module or one folder up, i.e. `dist/vendor/` for `dist/chunks/*.mjs`:
 * the seccomp loader that blocks Unix sockets and namespace escapes inside bubblewrap (Linux
 * x64 and arm64), and the JVM proxy agent. Copied with the library's licence. The Windows
 * helper is left out: tasks are not sandboxed on Windows.
 */
function copySandboxHelpers() {
  const from = join(root, 'node_modules', '@anthropic-ai', 'sandbox-runtime');
  const to = join(root, 'plugin', 'dist', 'vendor');
  for (const part of ['seccomp/x64/apply-seccomp', 'seccomp/arm64/apply-seccomp']) {
    cpSync(join(from, 'vendor', part), join(to, part));
  }
  cpSync(
    join(from, 'vendor', 'java-proxy-agent', 'srt-proxy-agent.jar'),
    join(to, 'java-proxy-agent', 'srt-proxy-agent.jar'),
  );
  cpSync(join(from, 'LICENSE'), join(to, 'LICENSE'));
}

rmSync(join(root, 'plugin', 'dist'), { recursive: true, force: true });
await Promise.all([
  ...ESM_BUILDS.map((entryPoints) =>
    build({
      ...shared,
      entryPoints,
      outExtension: { '.js': '.mjs' },
      splitting: true,
      chunkNames: 'chunks/[name]-[hash]',
      format: 'esm',
      // Bundled CommonJS dependencies call require(); ESM has none without this. The import is
      // aliased: a bundled module importing createRequire itself would clash with the banner.
      banner: {
        js: "import { createRequire as __bannerCreateRequire } from 'node:module'; const require = __bannerCreateRequire(import.meta.url);",
      },
      plugins: [
        englishOnlyZodLocales,
        sandboxWithoutTlsTermination,
        sandboxWhichWithoutProcess,
        pricesWithoutTable,
      ],
    }),
  ),
  build({
    ...shared,
    entryPoints: HOOK_ENTRIES,
    outExtension: { '.js': '.cjs' },
    format: 'cjs',
    // A dynamic import() would start the ESM loader (tens of ms); lower it to require().
    supported: { 'dynamic-import': false },
    plugins: [classifierAsSibling],
  }),
]);
copySandboxHelpers();
checkNoWhichProcess();
await writePriceTable(root, join(root, 'plugin', 'dist', 'chunks'));

// The built server's `tools/list` answer, kept for the server to serve at start instead of
// converting every tool schema again (server/src/tools/listed-at-build.ts). Asked of the bundle
// just built, which has no such file yet, so the SDK answers.
const toolsList = await toolsListOf(join(root, 'plugin', 'dist', 'server.mjs'));
writeFileSync(join(root, 'plugin', 'dist', 'tools-list.json'), `${JSON.stringify(toolsList)}\n`);
