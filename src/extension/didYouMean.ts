// The Quick Fix for a registry problem that ends in "(did you mean 'x'?)": which text on the line to
// replace, and with what. Pure (no `vscode`): the code action provider only wraps it.

export interface LineFix {
  /** 0-based columns on the problem's line: replace [start, end) with `newText`. */
  start: number;
  end: number;
  newText: string;
  /** What the Quick Fix menu says. */
  title: string;
}

const SUGGESTION = /\(did you mean '([^'\n]+)'\?\)/;
/** What the problem says was written, when it quotes it in full: an unknown key, or a string value. */
const WRITTEN = /^unknown key '([^'\n]*)'|, not the string '([^'\n]*)'/;

/**
 * The edit that applies the suggestion of `message` to the word at `column` (where the problem points:
 * the key, or the value) of `lineText`, or undefined when there is none or the word is not the one
 * the message is about (the file changed since it was checked). A quoted value keeps its quotes.
 */
export function didYouMeanFix(lineText: string, column: number, message: string): LineFix | undefined {
  const suggestion = SUGGESTION.exec(message)?.[1];
  if (!suggestion || column < 0 || column >= lineText.length) return undefined;
  const word = wordAt(lineText, column);
  if (!word || word.text === suggestion) return undefined;
  const written = WRITTEN.exec(message);
  const said = written?.[1] ?? written?.[2];
  // Messages cut long text short ("…"); only a word quoted whole can be compared.
  if (said !== undefined && !said.endsWith('…') && said !== word.text) return undefined;
  return { start: word.start, end: word.end, newText: suggestion, title: `Change '${word.text}' to '${suggestion}'` };
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
