// The console panel's editor-tab title: pure, so the words are unit tested without an editor.
import type { ConsoleView } from '../../webview/protocol';

/** The console's title: what its tab shows (a server's form, the tool being tried, the recent calls). */
export function consoleTitle(view: ConsoleView, savedName?: string, triedName?: string): string {
  if (view === 'tool') return `Switchboard: Try ${triedName ?? 'a tool'}`;
  if (view === 'audit') return 'Switchboard: Recent calls';
  if (view === 'guardrails' && savedName) return `Switchboard: ${savedName} guardrails`;
  return savedName ? `Switchboard: ${savedName}` : 'Switchboard: New Server';
}
