// Text from a definition or a path, shown where a control character would do harm: a line break
// that draws a line of its own, a terminal escape, a bidirectional override that reorders what
// follows. Such characters are shown as \uXXXX instead.

/** C0 controls, DEL and C1 controls. */
export function isControl(code: number): boolean {
  return code < 0x20 || (code >= 0x7f && code <= 0x9f);
}

/** Marks and overrides that change the order text is drawn in (the "Trojan Source" characters). */
function isBidi(code: number): boolean {
  return code === 0x200e || code === 0x200f || (code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069);
}

/** `text` with every character `escape` picks written as \uXXXX. */
export function escapeChars(text: string, escape: (code: number) => boolean): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    out += escape(code) ? `\\u${code.toString(16).padStart(4, '0')}` : text[i];
  }
  return out;
}

/** `text` with control and bidirectional characters escaped. */
export function visibleText(text: string): string {
  return escapeChars(text, (c) => isControl(c) || isBidi(c));
}

/** Whether `text` holds a control character. */
export function hasControl(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (isControl(text.charCodeAt(i))) return true;
  return false;
}
