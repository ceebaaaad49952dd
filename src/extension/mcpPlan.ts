// Which MCP server definitions VS Code gets from a broker's state. Pure (no `vscode`): the rule
// is unit tested, the provider only wraps it.
import type { BrokerState } from '../broker/control/controlApi';
import { isHeld } from '../broker/supervision/upstreamStates';

export interface PlannedDefinition {
  label: string;
  /** Full endpoint URL as of this state (the port is refreshed again when VS Code starts it). */
  url: string;
  /** `/mcp` or `/servers/<name>/mcp`. */
  path: string;
  /** Changes whenever the tools behind the definition change, so VS Code refreshes them. */
  version: string;
  /** The declared client whose token is used; absent for per-server definitions (operator token, no facade there). */
  client?: string;
  server?: string;
}

export interface PlanOptions {
  editorClient: string;
  perServer: boolean;
  /** With the aggregated definition: one more per server that has MCP Apps (docs/mcp-apps.md). */
  appServers?: boolean;
  /** Added to labels in a multi-root workspace. */
  folderLabel?: string;
}

function hash(text: string): string {
  let h = 5381;
  for (let i = 0; i < text.length; i++) h = ((h << 5) + h + text.charCodeAt(i)) >>> 0;
  return h.toString(36);
}

export function planDefinitions(state: BrokerState, opts: PlanOptions): PlannedDefinition[] {
  if (state.broker.untrusted) return [];
  const origin = new URL(state.broker.url).origin;
  const suffix = opts.folderLabel ? ` (${opts.folderLabel})` : '';
  const client = opts.editorClient.trim();
  const perServer = (servers: BrokerState['servers']): PlannedDefinition[] =>
    servers
      .filter((s) => s.enabled && !isHeld(s.state))
      .map((s) => ({
        label: `${s.name}${suffix} · Switchboard`,
        url: `${origin}/servers/${s.name}/mcp`,
        path: `/servers/${s.name}/mcp`,
        version: `${state.broker.pid}.${hash(s.tools.map((t) => `${t.name}:${t.description ?? ''}`).join('|'))}`,
        server: s.name,
      }));
  if (!opts.perServer && client && state.clients.some((c) => c.name === client)) {
    const aggregated: PlannedDefinition = {
      label: `Switchboard${suffix}`,
      url: `${origin}/mcp`,
      path: '/mcp',
      version: `${state.broker.pid}.${state.broker.catalogVersion}`,
      client,
    };
    // An app's page calls its own server's tools by their own names: on its server's endpoint they
    // can reach nothing else (the aggregated endpoint binds them to the page the session read).
    const apps = opts.appServers ? perServer(state.servers.filter((s) => s.apps?.length)) : [];
    return [aggregated, ...apps];
  }
  return perServer(state.servers);
}
