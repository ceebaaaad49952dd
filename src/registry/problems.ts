// A Problem is one thing wrong (or worth a warning) in one registry file, positioned so the
// editor can underline it and a terminal can print it as `file:line:column`.

import * as path from 'node:path';
import type { Kind } from './schema';

export interface Problem {
  /** Absolute path of the file (or directory) the problem is in. */
  file: string;
  /** 1-based. */
  line: number;
  /** 1-based. */
  column: number;
  message: string;
  kind: Kind;
  severity: 'error' | 'warning';
  /**
   * A likely correction of the word the problem points at (a misspelt key or value), which the
   * message also says in words ("did you mean 'command'?"): the editor offers it as a Quick Fix.
   */
  fix?: ProblemFix;
}

export interface ProblemFix {
  /** The word as written, whole. */
  replace: string;
  /** What to write instead. */
  with: string;
}

/** `mcp-servers.d/foo.yaml:3:1 error: unknown key 'comand' (did you mean 'command'?)` */
export function formatProblem(p: Problem, root?: string): string {
  const shown = root !== undefined ? path.relative(root, p.file) || p.file : p.file;
  return `${shown}:${p.line}:${p.column} ${p.severity}: ${p.message}`;
}

/** Stable order: by file, then position, so snapshots compare equal when nothing changed. */
export function compareProblems(a: Problem, b: Problem): number {
  if (a.file !== b.file) return a.file < b.file ? -1 : 1;
  return a.line - b.line || a.column - b.column || (a.message < b.message ? -1 : a.message > b.message ? 1 : 0);
}
