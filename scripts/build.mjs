// Builds the three bundles: the broker daemon/CLI, the extension, and the console webview.
import { build } from 'esbuild';
import { mkdirSync } from 'node:fs';
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
const node = {
  ...common,
  plugins: [englishOnlyZod, jsoncParserEsm],
  ...(minify ? { minify } : { minifyWhitespace: true }),
};
mkdirSync('dist', { recursive: true });

await Promise.all([
  build({ ...node, entryPoints: ['src/broker/main.ts'], outfile: 'dist/broker.js', format: 'cjs' }),
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
]);
