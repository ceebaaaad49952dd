// Whether a path lies inside the registry root once symbolic links are resolved: the check the loader
// and the writer share, so nothing outside the root is read or written through a link.

import * as fs from 'node:fs';
import * as path from 'node:path';

/** True when `child` is `parent` or below it (both already resolved). */
export function isInside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** The root with every link resolved; as given (absolute) while it does not exist. */
export function realRootOf(root: string): string {
  try {
    return fs.realpathSync(root);
  } catch {
    return path.resolve(root);
  }
}

/** Where `p` really is, when a link takes it outside `realRoot`; undefined when it stays inside. */
export function escapeOf(realRoot: string, p: string): string | undefined {
  const real = fs.realpathSync(p);
  return isInside(realRoot, real) ? undefined : real;
}
