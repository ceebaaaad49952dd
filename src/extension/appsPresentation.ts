// How the Servers view shows a server's MCP Apps: one line per page, the tools that open it and
// what the page declares it may load. Pure (no `vscode`): unit tested, the tree only wraps it.
import type { ServerStatus } from '../broker/control/controlApi';

export interface AppLine {
  id: string;
  label: string;
  description: string;
  tooltip: string;
  /** The page changed since approval and is held until reviewed. */
  held: boolean;
}

/** A page's declared CSP in words: which origins it may connect to and load from. */
export function cspWords(ui: Record<string, unknown> | undefined): string {
  const csp = (ui?.csp ?? {}) as { connectDomains?: unknown; resourceDomains?: unknown };
  const list = (v: unknown): string[] => (Array.isArray(v) ? v.filter((d): d is string => typeof d === 'string') : []);
  const connect = list(csp.connectDomains);
  const load = list(csp.resourceDomains);
  return (
    `connects to ${connect.length ? connect.join(', ') : 'nothing'}; ` +
    `loads from ${load.length ? load.join(', ') : 'nothing outside the page'}`
  );
}

export function appLines(s: ServerStatus): AppLine[] {
  return (s.apps ?? []).map((app) => {
    const modelTools = app.tools.filter((t) => !app.appOnlyTools.includes(t));
    const opened = modelTools.length ? `opened by ${modelTools.join(', ')}` : 'no tool opens it';
    const appOnly = app.appOnlyTools.length ? `; its page calls ${app.appOnlyTools.join(', ')}` : '';
    return {
      id: `app-${app.uri}`,
      label: app.title ? `${app.title}` : app.uri,
      description: app.held ? 'held: changed since approval' : `${opened}${appOnly}`,
      tooltip:
        `${app.uri} (on the aggregated endpoint ${app.aggregatedUri})\n${opened}${appOnly}.\n` +
        `The page ${cspWords(app.ui)}.` +
        (app.held ? '\nHeld back until you review and accept the change (Review Tool Changes).' : ''),
      held: app.held,
    };
  });
}
