// Two registry files whose names differ only in case (Echo.yaml, echo.yaml) are one file on Windows
// and macOS: which one a checkout keeps is chance, so the pair is a problem there (and worth a warning
// on Linux, where the repository would break for everyone on those systems).
import type { Problem } from './problems';
import { ignoresCase, pathsFor } from './rootPaths';
import type { Kind } from './schema';

/**
 * Problems for the files of one registry directory (`files`: paths as listed) whose names are equal
 * when case is ignored. An error on Windows and macOS; on other systems a warning when `warnElsewhere`
 * is set (the files work here but not in a checkout there), else nothing.
 */
export function caseCollisionProblems(
  kind: Kind,
  files: readonly string[],
  platform: NodeJS.Platform,
  warnElsewhere = false,
): Problem[] {
  const here = ignoresCase(platform);
  const path = pathsFor(platform);
  if (!here && !warnElsewhere) return [];
  const byKey = new Map<string, string[]>();
  for (const file of files) {
    const key = path.basename(file).toLowerCase();
    byKey.set(key, [...(byKey.get(key) ?? []), file]);
  }
  const problems: Problem[] = [];
  for (const group of byKey.values()) {
    if (group.length < 2) continue;
    for (const file of [...group].sort()) {
      const own = path.basename(file);
      const others = group
        .map((f) => path.basename(f))
        .filter((n) => n !== own)
        .sort();
      const message = here
        ? `${own} and ${others.join(', ')} are the same file on this system, which ignores case in file ` +
          'names; which one is read is chance. Keep one (lower-case, like the definition name) and delete the others.'
        : `${own} and ${others.join(', ')} differ only in case; on Windows and macOS they are one file and ` +
          'a checkout keeps only one of them. Keep one (lower-case, like the definition name).';
      problems.push({ file, line: 1, column: 1, kind, severity: here ? 'error' : 'warning', message });
    }
  }
  return problems;
}
