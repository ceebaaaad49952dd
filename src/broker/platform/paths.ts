// Registry roots as each OS spells them: drive letters, backslashes, spaces, UNC shares (\\server\share),
// and file systems that ignore case (Windows, macOS by default). Pure: the platform is a parameter.
import * as path from 'node:path';

function pathsFor(platform: NodeJS.Platform): path.PlatformPath {
  return platform === 'win32' ? path.win32 : path.posix;
}

/** Whether names differing only in case name one file there (NTFS and APFS/HFS+ as shipped). */
export function caseInsensitiveFileSystem(platform: NodeJS.Platform): boolean {
  return platform === 'win32' || platform === 'darwin';
}

/** `\\server\share\...` or `//server/share/...`, and the `\\?\` / `\\.\` device forms. */
export function isUncPath(p: string): boolean {
  return /^[\\/]{2}[^\\/]+[\\/]+[^\\/]+/.test(p);
}

/**
 * A registry root as an absolute, normalized path: relative roots resolve against `base` (the
 * workspace folder), `C:/a/b/` becomes `C:\a\b`, a drive letter is upper-cased, and a trailing
 * separator goes (except on a drive or share root, where it is the root).
 */
export function normalizeRoot(root: string, base: string, platform: NodeJS.Platform): string {
  const paths = pathsFor(platform);
  let resolved = paths.resolve(base, root);
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
  return caseInsensitiveFileSystem(platform) ? normalized.toLowerCase() : normalized;
}

/** Whether `file` is `root` or inside it, by that OS's rules (another drive or share is never inside). */
export function isInsideRoot(root: string, file: string, platform: NodeJS.Platform): boolean {
  const paths = pathsFor(platform);
  const a = rootKey(root, platform);
  const b = rootKey(file, platform);
  const rel = paths.relative(a, b);
  if (rel === '') return true;
  if (paths.isAbsolute(rel)) return false; // another drive or share
  const first = rel.split(/[\\/]/)[0];
  return first !== '..';
}
