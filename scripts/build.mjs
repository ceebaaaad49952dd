// Builds the bundles: the broker daemon/CLI, the extension, the console webview and the App preview webview.
import { build, stop as stopEsbuild } from 'esbuild';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/**
 * zod ships every locale's error messages (a quarter of the broker bundle) behind one namespace
 * export that defeats tree shaking; the broker and the extension only ever use English, zod's
 * default. This keeps `locales.en` and drops the rest.
 */
const englishOnlyZod = {
  name: 'english-only-zod',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      args.importer.includes(`${path.sep}zod${path.sep}`)
        ? { path: path.resolve(args.resolveDir, '../locales/en.js'), namespace: 'zod-locales' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(args.path)};`,
      loader: 'js',
      resolveDir: path.dirname(args.path),
    }));
  },
};

/**
 * jsonc-parser's `main` is a UMD build whose inner requires esbuild cannot follow (the bundle then
 * fails at run time: "Cannot find module './impl/format'"); its `module` build is plain ESM.
 */
const jsoncParserEsm = {
  name: 'jsonc-parser-esm',
  setup(b) {
    const dir = path.dirname(createRequire(import.meta.url).resolve('jsonc-parser/package.json'));
    b.onResolve({ filter: /^jsonc-parser$/ }, () => ({ path: path.join(dir, 'lib', 'esm', 'main.js') }));
  },
};

/**
 * js-tiktoken's ranks are a megabyte of source that only counting tokens needs, and counting runs in
 * a short-lived child process (src/broker/catalog/tokenCounter.ts). In the broker bundle they would be parsed
 * and kept by every broker, at every start: they are bundled apart, next to it, and required from
 * there only when counting.
 */
const TOKENIZER_FILES = {
  'js-tiktoken/lite': 'tiktoken-lite.js',
  'js-tiktoken/ranks/cl100k_base': 'tiktoken-cl100k_base.js',
};
const tokenizerApart = {
  name: 'tokenizer-apart',
  setup(b) {
    b.onResolve({ filter: /^js-tiktoken\// }, (args) => {
      const file = TOKENIZER_FILES[args.path];
      if (!file) throw new Error(`bundle ${args.path} apart too (scripts/build.mjs)`);
      return { path: `./${file}`, external: true };
    });
  },
};

/**
 * The OpenTelemetry SDK and its exporters (half a megabyte) are needed only when telemetry is on
 * (src/broker/telemetry/telemetry.ts requires them then): bundled apart, next to the broker, so a
 * broker with telemetry off never reads or parses them.
 */
const TELEMETRY_SDK_FILE = 'telemetry-sdk.js';
const telemetryApart = {
  name: 'telemetry-apart',
  setup(b) {
    b.onResolve({ filter: /^\.\/otelSdk$/ }, (args) =>
      args.importer.includes(`${path.sep}telemetry${path.sep}`)
        ? { path: `./${TELEMETRY_SDK_FILE}`, external: true }
        : undefined,
    );
  },
};

/**
 * V8 keeps a script's source for as long as the script lives, as one-byte characters when every
 * character is Latin-1 and as two bytes each otherwise. `charset: 'ascii'` escapes the non-ASCII
 * characters of strings and identifiers but not of regular expression literals: two in
 * dependencies (cel-js's `µs`, the stemmer's `’`) made the broker hold its 1.5 MB bundle as a
 * 3.1 MB string. This escapes them in the dependency's source as esbuild reads it. A character
 * written with a backslash before it (`\’`, an identity escape) loses that backslash: `\u2019`,
 * not `\\u2019`, which would match a backslash. `assertAscii` below keeps it that way.
 */
const escapeNonAsciiInDependencies = {
  name: 'escape-non-ascii-in-dependencies',
  setup(b) {
    b.onLoad({ filter: /[\\/]node_modules[\\/].*\.(c|m)?js$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      if (!/[\u0080-\uffff]/.test(text)) return undefined;
      return { contents: escapeNonAscii(text), loader: 'js' };
    });
  },
};

/** Every non-ASCII character of `text` as `\uXXXX` (astral ones as their two surrogates). */
export function escapeNonAscii(text) {
  return text.replace(/(\\*)([\u0080-\uffff])/g, (_, slashes, ch) => {
    const kept = slashes.length % 2 === 1 ? slashes.slice(1) : slashes;
    return kept + `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
}

/** The Node bundles are pure ASCII (see escapeNonAsciiInDependencies): a regression says where. */
function assertAscii(file) {
  const text = readFileSync(file, 'latin1');
  const at = text.search(/[\u0080-\uffff]/);
  if (at >= 0)
    throw new Error(
      `${file} is not ASCII at offset ${at} (…${text.slice(Math.max(0, at - 40), at + 10)}…): ` +
        'V8 would hold the whole bundle as a two-byte string. Escape it (scripts/build.mjs).',
    );
}

// Whitespace minification drops comments too: a few non-ASCII characters in the SDK's comments
// would otherwise make V8 hold the whole bundle's source as a two-byte string (3.4 MB, not 1.2).
// Names stay as they are (readable stack traces); the source maps map positions back.
const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  logLevel: 'warning',
  legalComments: 'none',
  charset: 'ascii',
};
const minify = process.argv.includes('--minify');
// Node bundles are never minified beyond whitespace, for the package (--minify) too: the broker
// minified in full settled at 69.2 MB idle against 64.0 MB (5 alternated rounds of bench/memory.mjs),
// its malloc heap 9.8 instead of 3.7-4.8 MB (docs/performance.md, "Memory, stop 42"). --minify
// minifies the webviews only.
const node = {
  ...common,
  plugins: [englishOnlyZod, jsoncParserEsm, telemetryApart, escapeNonAsciiInDependencies],
  minifyWhitespace: true,
};

/**
 * `--stack-floor`: only bench/fixtures/sdk-gateway.mjs, the smallest gateway on the broker's stack,
 * bundled with the broker's own options into bench/results/ (the bench's idle-memory floor; never
 * shipped).
 */
if (process.argv.includes('--stack-floor')) {
  mkdirSync('bench/results', { recursive: true });
  await build({
    ...node,
    entryPoints: ['bench/fixtures/sdk-gateway.mjs'],
    outfile: 'bench/results/sdk-gateway.mjs',
    format: 'esm',
    // The SDK's CommonJS dependencies require() node built-ins; an ESM bundle needs a require for them.
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  });
  assertAscii('bench/results/sdk-gateway.mjs');
  // esbuild's service process is ended before exiting: the bench counts what its runs leave behind.
  await stopEsbuild();
  process.exit(0);
}

mkdirSync('dist', { recursive: true });

await Promise.all([
  build({
    ...node,
    plugins: [...node.plugins, tokenizerApart],
    entryPoints: ['src/broker/cli/main.ts'],
    outfile: 'dist/broker.js',
    format: 'cjs',
  }),
  build({
    ...node,
    entryPoints: ['src/broker/telemetry/otelSdk.ts'],
    outfile: `dist/${TELEMETRY_SDK_FILE}`,
    format: 'cjs',
    // The packages' CommonJS builds, as Node's own require() would load them, not their ESM builds
    // (esbuild's default "module" condition): an ESM module required from CommonJS becomes an object
    // of getters, and the SDK reads `api.trace`, `api.context`… through them on every span and
    // record (a megamorphic getter seen at ~2% of a traced call's CPU; docs/performance.md, stop 41).
    conditions: [],
  }),
  ...Object.entries(TOKENIZER_FILES).map(([module, file]) =>
    // A require() of the module, as the broker bundle's own require would have resolved it.
    build({
      ...node,
      stdin: { contents: `module.exports = require(${JSON.stringify(module)});`, resolveDir: process.cwd() },
      outfile: `dist/${file}`,
      format: 'cjs',
    }),
  ),
  build({
    ...node,
    entryPoints: ['src/extension/extension.ts'],
    outfile: 'dist/extension.js',
    format: 'cjs',
    external: ['vscode'],
  }),
  build({
    ...common,
    minify,
    platform: 'browser',
    target: 'es2022',
    entryPoints: ['webview/console.ts'],
    outfile: 'dist/webview/console.js',
    format: 'iife',
  }),
  build({
    ...common,
    minify,
    platform: 'browser',
    target: 'es2022',
    entryPoints: ['webview/appHost.ts'],
    outfile: 'dist/webview/appHost.js',
    format: 'iife',
  }),
]);
for (const file of [
  'dist/broker.js',
  `dist/${TELEMETRY_SDK_FILE}`,
  ...Object.values(TOKENIZER_FILES).map((f) => `dist/${f}`),
])
  assertAscii(file);
