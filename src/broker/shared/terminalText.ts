// Text that came from a server (its stderr, its error messages, its tool names) on its way to a
// person's terminal. A hostile upstream must not be able to move the cursor, rewrite what the
// operator reads, retitle the window or smuggle an OSC 8 link into `switchboard logs` / `status`:
// every control character except the line breaks and tabs the layout uses is shown escaped.

/** C0 controls (but the kept ones), DEL and the C1 controls (0x80-0x9f: CSI is 0x9b on some terminals). */
function isControl(code: number): boolean {
  return code < 0x20 || code === 0x7f || (code >= 0x80 && code <= 0x9f);
}

/** `text` with each control character as `\xNN`, except those in `keep` (newline and tab by default). */
export function escapeControls(text: string, keep = '\n\t'): string {
  let out = '';
  let plainFrom = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (!isControl(code) || keep.includes(text[i])) continue;
    out += text.slice(plainFrom, i) + `\\x${code.toString(16).padStart(2, '0')}`;
    plainFrom = i + 1;
  }
  return plainFrom === 0 ? text : out + text.slice(plainFrom);
}
