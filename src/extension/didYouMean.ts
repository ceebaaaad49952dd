// The Quick Fix for a registry problem that carries a fix (the parser's "did you mean 'x'?"): which
// text on the line to replace, and with what. Pure (no `vscode`): the code action provider only wraps it.
import type { ProblemFix } from '../registry/problems';

export interface LineFix {
  /** 0-based columns on the problem's line: replace [start, end) with `newText`. */
  start: number;
  end: number;
  newText: string;
  /** What the Quick Fix menu says. */
  title: string;
}

/**
 * The edit that applies a problem's fix (a misspelt key or value and its likely correction, from the
 * registry's own parser) to the word at `column` of `lineText` (where the problem points), or undefined
 * when there is none or the word there is no longer the one the fix is about (the file changed since it
 * was checked). A quoted value keeps its quotes.
 */
export function didYouMeanFix(lineText: string, column: number, fix: ProblemFix | undefined): LineFix | undefined {
  if (!fix || column < 0 || column >= lineText.length) return undefined;
  const word = wordAt(lineText, column);
  if (!word || word.text !== fix.replace || word.text === fix.with) return undefined;
  return { start: word.start, end: word.end, newText: fix.with, title: `Change '${word.text}' to '${fix.with}'` };
}

/** The YAML key or scalar starting at `column`; for a quoted one, the text inside the quotes. */
function wordAt(lineText: string, column: number): { start: number; end: number; text: string } | undefined {
  const first = lineText[column];
  if (first === '"' || first === "'") {
    const close = lineText.indexOf(first, column + 1);
    if (close < 0) return undefined;
    const text = lineText.slice(column + 1, close);
    // An escape inside double quotes would make the replacement ambiguous: no fix rather than a wrong one.
    if (first === '"' && text.includes('\\')) return undefined;
    return { start: column + 1, end: close, text };
  }
  const m = /^[^\s:,[\]{}#"']+/.exec(lineText.slice(column));
  if (!m) return undefined;
  return { start: column, end: column + m[0].length, text: m[0] };
}
