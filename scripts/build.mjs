// Builds the three bundles: the broker daemon/CLI, the extension, and the console webview.
import { build } from 'esbuild';
import { mkdirSync } from 'node:fs';

const common = { bundle: true, platform: 'node', target: 'node20', sourcemap: true, logLevel: 'warning', legalComments: 'none' };
const minify = process.argv.includes('--minify');
mkdirSync('dist', { recursive: true });

await Promise.all([
  build({ ...common, minify, entryPoints: ['src/broker/main.ts'], outfile: 'dist/broker.js', format: 'cjs' }),
  build({ ...common, minify, entryPoints: ['src/extension/extension.ts'], outfile: 'dist/extension.js', format: 'cjs', external: ['vscode'] }),
  build({ ...common, minify, platform: 'browser', target: 'es2022', entryPoints: ['webview/console.ts'], outfile: 'dist/webview/console.js', format: 'iife' }),
]);
