// How a server's log lines read in the live log terminal. Pure (no `vscode`): unit tested.
import type { LogLine } from '../broker/control/controlApi';
import { escapeControls } from '../broker/shared/terminalText';

const DIM = '\x1b[2m';
const YELLOW = '\x1b[33m';
const RESET = '\x1b[0m';

/** `14:03:07.123`, local time, or the text as given when it is not a date. */
function clock(at: string): string {
  const d = new Date(at);
  if (Number.isNaN(d.getTime())) return at;
  const pad = (n: number, w = 2): string => String(n).padStart(w, '0');
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

/**
 * Terminal text for a page of log lines: what the server wrote to stderr as it is, the broker's own
 * lifecycle lines (starting, stopped: …) dimmed, each line ending in CRLF as a terminal wants. Control
 * characters a server writes are shown escaped so it cannot move the cursor or recolour what follows.
 */
export function terminalText(lines: readonly LogLine[], skipped = 0): string {
  let out = '';
  if (skipped > 0)
    out += `${YELLOW}… ${skipped} line${skipped === 1 ? '' : 's'} not shown (the broker keeps the last 500)${RESET}\r\n`;
  for (const l of lines) {
    // Tabs stay; a line break inside one line of the log would break the layout, so it is escaped too.
    const text = escapeControls(l.text, '\t');
    const head = `${DIM}${clock(l.at)}${RESET} `;
    out += l.stream === 'stderr' ? `${head}${text}\r\n` : `${head}${DIM}[broker] ${text}${RESET}\r\n`;
  }
  return out;
}

/** The text without the colour codes this module adds: what a test or a screen reader gets. */
export function plain(text: string): string {
  return [DIM, YELLOW, RESET].reduce((t, code) => t.split(code).join(''), text);
}
