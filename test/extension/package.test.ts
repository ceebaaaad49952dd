// The published .vsix: what `vsce` would pack (`vsce ls`, the list `npm run package` zips) holds every
// file the manifest and the extension load, the broker bundle the extension spawns among them, and
// nothing of the sources, tests or tools. Run after `npm run build` (npm run pretest does it).
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');

/** Every relative file path the manifest names: main, icon, view and command icons, JSON Schemas. */
function manifestFiles(manifest: Record<string, unknown>): string[] {
  const found = new Set<string>();
  const walk = (value: unknown, key: string) => {
    if (typeof value === 'string') {
      if (['main', 'icon', 'url', 'light', 'dark'].includes(key) && /^(\.\/)?[\w-]+\/[\w./-]+$/.test(value))
        found.add(path.posix.normalize(value));
    } else if (Array.isArray(value)) value.forEach((v) => walk(v, key));
    else if (value && typeof value === 'object')
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) walk(v, k);
  };
  walk({ main: manifest.main, icon: manifest.icon, contributes: manifest.contributes }, '');
  return [...found].sort();
}

describe('extension package (vsce ls)', function () {
  this.timeout(120_000);
  let packed: string[];
  const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as Record<string, unknown>;

  before(function () {
    const vsce = path.join(ROOT, 'node_modules', '@vscode', 'vsce', 'vsce');
    const out = execFileSync(process.execPath, [vsce, 'ls', '--no-dependencies'], { cwd: ROOT, encoding: 'utf8' });
    packed = out
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
  });

  it('holds every file the manifest names, and the bundles the extension loads at run time', () => {
    const needed = [
      ...manifestFiles(manifest),
      'dist/broker.js', // spawned by the extension (src/extension/ctx.ts)
      'dist/webview/console.js',
      'dist/webview/console.css',
      'LICENSE',
      'CHANGELOG.md',
      'README.md',
    ];
    assert.ok(needed.includes('dist/extension.js') && needed.includes('media/icon.png'), needed.join(', '));
    for (const file of needed) assert.ok(packed.includes(file), `${file} is packed (packed: ${packed.join(', ')})`);
  });

  it('holds every file the build writes to dist/ but its source maps', () => {
    // The App preview's webview (dist/webview/appHost.js) was once built and left out of the package.
    const built = (fs.readdirSync(path.join(ROOT, 'dist'), { recursive: true }) as string[])
      .map((f) => f.split(path.sep).join('/'))
      .filter((f) => !f.startsWith('node_modules/') && fs.statSync(path.join(ROOT, 'dist', f)).isFile())
      .filter((f) => !f.endsWith('.map'))
      .map((f) => `dist/${f}`);
    assert.ok(built.includes('dist/webview/appHost.js') && built.includes('dist/broker.js'), built.join(', '));
    assert.deepEqual(
      built.filter((f) => !packed.includes(f)),
      [],
    );
  });

  it('leaves out sources, tests, tools, source maps and dependencies', () => {
    const stray = packed.filter((f) =>
      /^(src|test|out|bench|scripts|webview|workspace|docs|node_modules|\.tools|\.github|\.ci)\/|\.map$|\.ts$|\.vsix$/.test(
        f,
      ),
    );
    assert.deepEqual(stray, []);
  });

  it('has a 128×128 PNG icon', () => {
    const png = fs.readFileSync(path.join(ROOT, String(manifest.icon)));
    assert.equal(png.subarray(1, 4).toString('latin1'), 'PNG');
    assert.equal(png.subarray(12, 16).toString('latin1'), 'IHDR');
    assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [128, 128]);
  });
});
