// Parsing one registry file: text in, definition and positioned problems out. Pure (no file
// system), so the extension can run it on an unsaved editor buffer for live diagnostics and the
// loader can run it on disk contents with identical results.

import * as path from 'node:path';
import { isMap, isSeq, LineCounter, parseDocument, type Document } from 'yaml';
import { explainIssues } from './issues';
import { lintDefinition } from './lint';
import { validateName } from './names';
import { conditionProblems } from './policyConditions';
import { positionOf, type DataPath } from './positions';
import { compareProblems, type Problem } from './problems';
import { KIND_NOUNS, SCHEMAS, type DefByKind, type Kind } from './schema';

export interface ParseResult<D> {
  /** Present when the file has no errors (warnings allowed). */
  def?: D;
  problems: Problem[];
}

/** Files larger than this are refused unread: a registry entry is a few hundred bytes. */
export const MAX_FILE_BYTES = 1024 * 1024;

/** Anchors/aliases are allowed (shared env blocks), but not enough of them to expand into a bomb. */
const MAX_ALIAS_COUNT = 100;

export const YAML_EXTENSIONS = ['.yaml', '.yml'] as const;

/** `foo` for `/x/mcp-servers.d/foo.yaml`; the registry key a file is allowed to define. */
export function stemOf(fileName: string): string {
  const base = path.basename(fileName);
  const ext = YAML_EXTENSIONS.find((e) => base.endsWith(e));
  return ext ? base.slice(0, -ext.length) : base;
}

/** First line of a yaml error, without the "at line X, column Y" the Problem already carries. */
function yamlMessage(message: string): string {
  return message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
}

/**
 * Parses and validates one file's text.
 * @param fileName reported verbatim as `Problem.file` (the loader passes an absolute path); its
 *   base name, without `.yaml`/`.yml`, is the name the file must define.
 */
export function parseDefinition<K extends Kind>(kind: K, fileName: string, text: string): ParseResult<DefByKind[K]> {
  const problems: Problem[] = [];
  const noun = KIND_NOUNS[kind];
  const problem = (
    line: number,
    column: number,
    message: string,
    severity: Problem['severity'] = 'error',
    fix?: Problem['fix'],
  ) => problems.push({ file: fileName, line, column, message, kind, severity, ...(fix ? { fix } : {}) });

  if (Buffer.byteLength(text, 'utf8') > MAX_FILE_BYTES) {
    problem(1, 1, `the file is larger than ${MAX_FILE_BYTES} bytes; a ${noun} definition should be a few lines`);
    return { problems };
  }

  const lc = new LineCounter();
  const doc: Document = parseDocument(text, { lineCounter: lc, prettyErrors: true, uniqueKeys: true });
  for (const e of doc.errors)
    problem(e.linePos?.[0].line ?? 1, e.linePos?.[0].col ?? 1, `YAML: ${yamlMessage(e.message)}`);
  for (const w of doc.warnings)
    problem(w.linePos?.[0].line ?? 1, w.linePos?.[0].col ?? 1, `YAML: ${yamlMessage(w.message)}`, 'warning');
  if (doc.errors.length > 0) return { problems };

  const at = (p: DataPath, where: 'key' | 'value') => positionOf(doc, lc, p, where);

  if (doc.contents === null) {
    problem(1, 1, `the file is empty; a ${noun} definition is a mapping such as 'description: ...'`);
    return { problems };
  }
  if (!isMap(doc.contents)) {
    const what = isSeq(doc.contents) ? 'a list' : 'a single value';
    const pos = at([], 'value');
    problem(pos.line, pos.column, `the top level of a ${noun} file must be a mapping (key: value pairs), not ${what}`);
    return { problems };
  }

  let data: Record<string, unknown>;
  try {
    data = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }) as Record<string, unknown>;
  } catch (err) {
    problem(1, 1, `YAML: ${(err as Error).message}`);
    return { problems };
  }

  // The file name is the key. `name` may be omitted (the file name supplies it); when given it
  // must agree, otherwise renaming a file would silently rename the server.
  const base = path.basename(fileName);
  const stem = stemOf(fileName);
  const nameGiven = Object.prototype.hasOwnProperty.call(data, 'name');
  if (!nameGiven) {
    const reason = validateName(stem);
    if (reason !== undefined) {
      problem(1, 1, `the file name '${base}' is not a valid ${noun} name: ${reason}`);
      return { problems };
    }
    data = { name: stem, ...data };
  } else if (typeof data.name === 'string' && data.name !== stem && validateName(data.name) === undefined) {
    const pos = at(['name'], 'value');
    problem(
      pos.line,
      pos.column,
      `name '${data.name}' does not match the file name '${base}'; ` +
        `rename the file to '${data.name}${path.extname(base)}' or change the name`,
    );
  }

  const schema = SCHEMAS[kind];
  const result = schema.safeParse(data);
  if (!result.success) {
    for (const issue of explainIssues(result.error.issues, schema, data)) {
      const pos = at(issue.path, issue.at);
      problem(pos.line, pos.column, issue.message, 'error', issue.fix);
    }
  }
  if (result.success && kind === 'policy') {
    // A guardrail's condition is checked as the file loads, at the place in it where it goes wrong.
    for (const bad of conditionProblems((result.data as DefByKind['policy']).rules)) {
      const pos = at(bad.path, 'value');
      const quoted = /^["']/.test(text.split('\n')[pos.line - 1]?.slice(pos.column - 1) ?? '') ? 1 : 0;
      problem(pos.line, pos.column + (bad.offset === undefined ? 0 : bad.offset + quoted), bad.message);
    }
  }
  if (problems.some((p) => p.severity === 'error') || !result.success)
    return { problems: problems.sort(compareProblems) };

  for (const lint of lintDefinition(kind, result.data)) {
    const pos = at(lint.path, 'value');
    problem(pos.line, pos.column, lint.message, 'warning');
  }
  return { def: result.data, problems: problems.sort(compareProblems) };
}
