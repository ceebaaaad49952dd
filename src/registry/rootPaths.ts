// Registry roots and the files under them as each OS spells them: drive letters, backslashes, spaces,
// UNC shares (\\server\share), long-path prefixes (\\?\), and file systems that ignore case (Windows,
// macOS by default). Pure: the platform is a parameter, so Windows' rules are tested on Linux; the
// loader, writer and watcher pass process.platform, and the broker keys its one-broker-per-root on it.
import * as path from 'node:path';
import { isWindowsDeviceName } from './names';

export { isWindowsDeviceName } from './names';

export function pathsFor(platform: NodeJS.Platform): path.PlatformPath {
  return platform === 'win32' ? path.win32 : path.posix;
}

/**
 * Whether names differing only in case name one file there (NTFS, and APFS/HFS+ as shipped; a
 * case-sensitive APFS volume is the exception this cannot see, and there it errs towards "inside").
 */
export function ignoresCase(platform: NodeJS.Platform): boolean {
  return platform === 'win32' || platform === 'darwin';
}

/** `\\server\share\...` or `//server/share/...`, and the `\\?\` / `\\.\` device forms. */
export function isUncPath(p: string): boolean {
  return /^[\\/]{2}[^\\/]+[\\/]+[^\\/]+/.test(p);
}

/**
 * Windows' long-path forms as the ordinary path they name: `\\?\C:\x` is `C:\x`, `\\?\UNC\srv\share\x`
 * is `\\srv\share\x` (realpath and some tools return them). Elsewhere the path is unchanged.
 */
export function withoutLongPathPrefix(p: string, platform: NodeJS.Platform): string {
  if (platform !== 'win32') return p;
  const unc = /^[\\/]{2}\?[\\/]UNC[\\/]/i.exec(p);
  if (unc) return `\\\\${p.slice(unc[0].length)}`;
  const drive = /^[\\/]{2}\?[\\/](?=[A-Za-z]:)/.exec(p);
  return drive ? p.slice(drive[0].length) : p;
}

/**
 * A path that names one place whatever the current directory or drive: on Windows `C:\...` or a UNC
 * share (not `\x`, which is on the current drive, nor `C:x`, relative to C:'s current directory).
 */
export function isFullyQualified(p: string, platform: NodeJS.Platform): boolean {
  if (p.includes('\0')) return false;
  if (platform !== 'win32') return p.startsWith('/');
  const plain = withoutLongPathPrefix(p, platform);
  return /^[A-Za-z]:[\\/]/.test(plain) || isUncPath(plain);
}

/**
 * A registry root as an absolute, normalized path: relative roots resolve against `base` (the
 * workspace folder), `C:/a/b/` becomes `C:\a\b`, a drive letter is upper-cased, a long-path prefix
 * goes, and so does a trailing separator (except on a drive or share root, where it is the root).
 */
export function normalizeRoot(root: string, base: string, platform: NodeJS.Platform): string {
  const paths = pathsFor(platform);
  let resolved = withoutLongPathPrefix(paths.resolve(base, withoutLongPathPrefix(root, platform)), platform);
  if (platform === 'win32') resolved = resolved.replace(/^([a-z]):/, (_, d: string) => `${d.toUpperCase()}:`);
  const parsedRoot = paths.parse(resolved).root;
  while (resolved.length > parsedRoot.length && /[\\/]$/.test(resolved)) resolved = resolved.slice(0, -1);
  return resolved;
}

/**
 * The form two spellings of one root share, so one root maps to one broker: on a case-insensitive
 * system `c:\Work\WS` and `C:\work\ws\` are the same folder.
 */
export function rootKey(root: string, platform: NodeJS.Platform): string {
  const normalized = normalizeRoot(root, pathsFor(platform).sep, platform);
  return ignoresCase(platform) ? normalized.toLowerCase() : normalized;
}

/**
 * Whether a path segment climbs out of its folder there. On Windows trailing dots and spaces are
 * dropped from a name, so `.. ` and `...` are read with suspicion and count as climbing (a real folder
 * with such a name is refused, never an escape allowed).
 */
function climbs(segment: string, platform: NodeJS.Platform): boolean {
  if (segment === '..') return true;
  return platform === 'win32' && segment.length > 0 && /^[. ]+$/.test(segment) && segment.includes('..');
}

/**
 * Whether `file` is `root` or inside it, by that OS's rules: case ignored on Windows and macOS, another
 * drive or share is never inside, and a path that is not fully qualified (relative, `\x`, `C:x`) or
 * holds a NUL is never inside. Both paths are taken as they are: resolve links before asking.
 */
export function isInsideRoot(root: string, file: string, platform: NodeJS.Platform): boolean {
  if (!isFullyQualified(root, platform) || !isFullyQualified(file, platform)) return false;
  const paths = pathsFor(platform);
  const a = rootKey(root, platform);
  const b = rootKey(file, platform);
  const rel = paths.relative(a, b);
  if (rel === '') return true;
  if (paths.isAbsolute(rel)) return false; // another drive or share
  const segments = platform === 'win32' ? rel.split(/[\\/]/) : rel.split('/');
  return !segments.some((s) => climbs(s, platform));
}

/** Two entry names of one directory name one entry there (`MCP-Servers.d` is `mcp-servers.d` on Windows). */
export function sameEntryName(a: string, b: string, platform: NodeJS.Platform): boolean {
  return ignoresCase(platform) ? a.toLowerCase() === b.toLowerCase() : a === b;
}

/**
 * `dir` joined with `base`, a file name that must stay one entry of `dir` there: no separator (`/`,
 * and `\` on Windows), not `.`/`..`, no NUL, and on Windows no `:` (a drive or an alternate data
 * stream), no trailing dot or space (Windows drops them, so `a.yaml.` is `a.yaml`), no device name.
 * Throws with the reason otherwise.
 */
export function childPath(dir: string, base: string, platform: NodeJS.Platform): string {
  const refuse = (why: string) => {
    throw new Error(`refusing to use ${JSON.stringify(base)} as a file name in ${dir}: ${why}`);
  };
  if (base === '' || base === '.' || base === '..') refuse('it is not a file name');
  if (base.includes('\0')) refuse('it contains a NUL character');
  if (base.includes('/') || (platform === 'win32' && base.includes('\\'))) refuse('it contains a path separator');
  if (platform === 'win32') {
    if (base.includes(':')) refuse("it contains ':' (a drive or an alternate data stream on Windows)");
    if (/[. ]$/.test(base)) refuse('it ends in a dot or a space, which Windows drops');
    if (isWindowsDeviceName(base)) refuse('it is a device name on Windows');
  }
  return pathsFor(platform).join(dir, base);
}
