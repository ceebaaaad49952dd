// Adding and cutting one `[mcp_servers.<name>]` table in a TOML file the person also edits (Codex's
// config.toml), keeping every other byte: comments, order, spacing. smol-toml parses and prints
// but keeps no comments or positions, so re-printing the whole file would lose the person's
// comments. Instead the table is located with the library and cut by line:
//   - a line can start a table only if it begins with `[` AND the text before it parses as TOML on
//     its own (a line inside a multi-line string or array leaves the text before it unterminated);
//   - the header's key path is read by parsing that one line, so quoting and spacing
//     (`[ mcp_servers . "switchboard" ]`) are the library's business, not a regular expression's.
// The caller parses the result and compares it with the original (agentFormats.ts), so a cut that
// went wrong is refused before anything is written.
import type * as SmolToml from 'smol-toml' with { 'resolution-mode': 'import' };
import { escapeChars, isControl } from '../../registry/visibleText';

type Toml = typeof SmolToml;

/** The mark of the comment `clients add` writes above its table; the comment goes when the table does. */
export const TOML_MARK = '# MCP Switchboard (switchboard clients add): ';

/** A comment's text as TOML allows it: no line breaks or other control characters (tab stays; the rest as \uXXXX). */
export function commentText(text: string): string {
  return escapeChars(text, (c) => c !== 0x09 && isControl(c));
}

/** The key path of a table header line (`[a."b c"]` → ['a', 'b c']), or undefined if it is not one. */
function headerPath(toml: Toml, line: string): string[] | undefined {
  let value: unknown;
  try {
    value = toml.parse(line.replace(/\r$/, ''));
  } catch {
    return undefined;
  }
  const path: string[] = [];
  for (;;) {
    if (Array.isArray(value)) value = value[0];
    if (typeof value !== 'object' || value === null || value instanceof Date) return undefined;
    const keys = Object.keys(value);
    if (keys.length === 0) return path.length ? path : undefined;
    if (keys.length !== 1) return undefined;
    path.push(keys[0]);
    value = (value as Record<string, unknown>)[keys[0]];
  }
}

function parses(toml: Toml, lines: readonly string[]): boolean {
  try {
    toml.parse(lines.join('\n'));
    return true;
  } catch {
    return false;
  }
}

/** The lines that start a table at the top level of the document (see the header for why parsing decides). */
function tableStarts(toml: Toml, lines: readonly string[]): { line: number; path: string[] }[] {
  const starts: { line: number; path: string[] }[] = [];
  for (let i = 0; i < lines.length; i++) {
    // Not a header when inside a multi-line string or array that began above.
    if (!/^\s*\[/.test(lines[i]) || !parses(toml, lines.slice(0, i))) continue;
    const path = headerPath(toml, lines[i]);
    if (path) starts.push({ line: i, path });
  }
  return starts;
}

const isBlankOrComment = (line: string): boolean => /^\s*(#.*)?\r?$/.test(line);

/**
 * `text` without the table `mcp_servers.<name>` and its sub-tables, each cut from its header to the
 * next table's header; comments and blank lines just before the next header stay with it, and the
 * comment `clients add` wrote above the table goes with the table.
 */
export function tomlRemove(toml: Toml, text: string, name: string): string {
  const lines = text.split('\n');
  const starts = tableStarts(toml, lines);
  const cut = new Set<number>();
  starts.forEach((start, k) => {
    const [first, second] = start.path;
    if (first !== 'mcp_servers' || second !== name) return;
    let end = k + 1 < starts.length ? starts[k + 1].line : lines.length;
    while (end > start.line + 1 && isBlankOrComment(lines[end - 1])) end--;
    let begin = start.line;
    if (lines[begin - 1]?.startsWith(TOML_MARK) && parses(toml, lines.slice(0, begin - 1))) {
      begin--;
      if (begin > 0 && lines[begin - 1].trim() === '') begin--;
    }
    for (let i = begin; i < end; i++) cut.add(i);
  });
  if (cut.size === 0) return text;
  const next = lines.filter((_, i) => !cut.has(i)).join('\n');
  return text.endsWith('\n') && !next.endsWith('\n') && next !== '' ? `${next}\n` : next;
}

/** `text` with the table `mcp_servers.<name>` added at the end, under a comment saying who added it. */
export function tomlAdd(toml: Toml, text: string, name: string, entry: Record<string, unknown>, note: string): string {
  const block = toml.stringify({ mcp_servers: { [name]: entry } }).trim();
  const sep = text === '' ? '' : text.endsWith('\n\n') ? '' : text.endsWith('\n') ? '\n' : '\n\n';
  return `${text}${sep}${TOML_MARK}${commentText(note)}\n${block}\n`;
}
