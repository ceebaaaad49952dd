// Quoting what a person (or a hostile file) wrote inside an error message, cut to a readable length:
// a 10,000-character name must not turn one refusal into a 20 KB message.

/** Longest quoted text shown whole; real names are at most 31 characters, keys and globs a few dozen. */
export const MAX_QUOTED_LENGTH = 64;

function cut(text: string, max: number): { shown: string; cutNote: string } {
  if (text.length <= max) return { shown: text, cutNote: '' };
  // Never split a surrogate pair: the cut-off half would print as a replacement character.
  const end = /[\uD800-\uDBFF]/.test(text[max - 1]) ? max - 1 : max;
  return { shown: `${text.slice(0, end)}…`, cutNote: ` (${text.length} characters; only the first ${end} shown)` };
}

/** `'text'`, or `'first 64…' (10000 characters; only the first 64 shown)`. */
export function quoted(text: string, max = MAX_QUOTED_LENGTH): string {
  const { shown, cutNote } = cut(text, max);
  return `'${shown}'${cutNote}`;
}

/** Like quoted(), JSON-style, so hidden characters (NUL, newlines, bidi controls) show as escapes. */
export function jsonQuoted(text: string, max = MAX_QUOTED_LENGTH): string {
  const { shown, cutNote } = cut(text, max);
  return `${JSON.stringify(shown)}${cutNote}`;
}
