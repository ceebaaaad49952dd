// npm run package: the .vsix. Without a target it is the universal package, JavaScript only (the
// bundles need nothing from node_modules). With `--target win32-x64` it is the Windows package, which
// also carries koffi and its Windows binary under dist/node_modules, where the broker's require('koffi')
// (src/broker/shared/platform/windowsJob.ts) finds them: without them a broker the extension starts on
// Windows has no Job Objects (docs/platforms.md).
//   node scripts/package.mjs [--target win32-x64] [--out file.vsix] [--no-build]
// --no-build packs dist/ as it is (the Windows tests pack the build they run).
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const STAGED = path.join(ROOT, 'dist', 'node_modules');
/** The targets whose package carries native code, and the koffi binary package each needs. */
const NATIVE = { 'win32-x64': '@koromix/koffi-win32-x64' };
/** What of koffi runs: its loader (it finds the binary package next to itself) and its licence. */
const KOFFI_FILES = ['package.json', 'index.cjs', 'LICENSE.txt', 'src/koffi/index.cjs', 'src/koffi/src/static.cjs'];

function option(name) {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : undefined;
}

const say = (line) => console.error(`[package] ${line}`);
const readJson = (file) => JSON.parse(fs.readFileSync(file, 'utf8'));

/** `npm pack` fetches a package's tarball without installing it: the binary packages declare another os. */
function unpack(spec, destination) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-pack-'));
  try {
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('npm_')));
    execFileSync('npm', ['pack', '--silent', spec], { cwd: tmp, env, stdio: ['ignore', 'ignore', 'inherit'] });
    const tarball = fs.readdirSync(tmp).find((f) => f.endsWith('.tgz'));
    fs.rmSync(destination, { recursive: true, force: true });
    fs.mkdirSync(destination, { recursive: true });
    execFileSync('tar', ['xzf', path.join(tmp, tarball), '-C', destination, '--strip-components=1']);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/** Copies koffi's loader and the target's binary package into dist/node_modules. */
function stageNative(binaryPackage) {
  const koffi = path.join(ROOT, 'node_modules', 'koffi');
  const version = readJson(path.join(koffi, 'package.json')).version;
  const binary = path.join(ROOT, 'node_modules', binaryPackage);
  let have;
  try {
    have = readJson(path.join(binary, 'package.json')).version;
  } catch {
    have = undefined;
  }
  if (have !== version) {
    say(`fetching ${binaryPackage}@${version}`);
    unpack(`${binaryPackage}@${version}`, binary);
  }
  for (const file of KOFFI_FILES) {
    fs.mkdirSync(path.dirname(path.join(STAGED, 'koffi', file)), { recursive: true });
    fs.copyFileSync(path.join(koffi, file), path.join(STAGED, 'koffi', file));
  }
  fs.cpSync(binary, path.join(STAGED, binaryPackage), {
    recursive: true,
    // The import library is for linking against koffi, not for loading it.
    filter: (src) => !src.endsWith('.lib'),
  });
}

const target = option('--target');
if (target !== undefined && !(target in NATIVE)) {
  console.error(`[package] no package for target '${target}': use one of ${Object.keys(NATIVE).join(', ')}, or none`);
  process.exit(2);
}
const manifest = readJson(path.join(ROOT, 'package.json'));
const out = path.resolve(option('--out') ?? `${manifest.name}-${target ? `${target}-` : ''}${manifest.version}.vsix`);

if (!process.argv.includes('--no-build'))
  execFileSync('node', ['scripts/build.mjs', '--minify'], { cwd: ROOT, stdio: 'inherit' });
// A staged tree left by an interrupted Windows package must never ride along in another package.
fs.rmSync(STAGED, { recursive: true, force: true });
try {
  if (target) stageNative(NATIVE[target]);
  const vsce = path.join(ROOT, 'node_modules', '@vscode', 'vsce', 'vsce');
  execFileSync(
    process.execPath,
    [
      vsce,
      'package',
      '--no-dependencies',
      '--allow-missing-repository',
      '--no-rewrite-relative-links',
      ...(target ? ['--target', target] : []),
      '--out',
      out,
    ],
    { cwd: ROOT, stdio: 'inherit' },
  );
} finally {
  fs.rmSync(STAGED, { recursive: true, force: true });
}
say(`${path.relative(process.cwd(), out) || out}: ${(fs.statSync(out).size / 1024).toFixed(0)} KB`);
