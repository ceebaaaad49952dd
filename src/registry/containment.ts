// Whether a path lies inside the registry root once symbolic links are resolved: the check the loader
// and the writer share, so nothing outside the root is read or written through a link. The path rules
// (drive letters, UNC shares, case) are rootPaths.ts's, for the platform this runs on.

import * as fs from 'node:fs';
import { isInsideRoot, normalizeRoot } from './rootPaths';

/** True when `child` is `parent` or below it (both already resolved), by the rules of `platform`. */
export function isInside(parent: string, child: string, platform: NodeJS.Platform = process.platform): boolean {
  return isInsideRoot(parent, child, platform);
}

/** The root with every link resolved; as given (absolute) while it does not exist. */
export function realRootOf(root: string, platform: NodeJS.Platform = process.platform): string {
  try {
    return normalizeRoot(fs.realpathSync(root), process.cwd(), platform);
  } catch {
    return normalizeRoot(root, process.cwd(), platform);
  }
}

/** Where `p` really is, when a link takes it outside `realRoot`; undefined when it stays inside. */
export function escapeOf(
  realRoot: string,
  p: string,
  platform: NodeJS.Platform = process.platform,
): string | undefined {
  const real = fs.realpathSync(p);
  return isInside(realRoot, real, platform) ? undefined : real;
}
