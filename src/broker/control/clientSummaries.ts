// The declared clients as `list_clients` shows them: scopes, tool profile, tool mode, the token file
// (never the token) and what the tools its profile lets it see cost in tokens.
import type { RegistrySnapshot } from '../../registry/loader';
import type { ClientTokens } from '../trust/clientTokens';
import type { Identity } from '../routing/requestContext';
import { compareOrdinal } from '../shared/ordinal';
import type { ControlledBroker } from './controlledBroker';
import type { ClientSummary } from './controlApi';

export function describeClients(
  snapshot: RegistrySnapshot,
  broker: ControlledBroker,
  tokens: ClientTokens,
): ClientSummary[] {
  return [...snapshot.clients.values()]
    .sort((a, b) => compareOrdinal(a.name, b.name))
    .map((c) => ({
      name: c.name,
      description: c.description,
      mcp_allow: c.mcp_allow,
      tools: c.tools,
      toolMode: c.toolMode ?? 'all',
      ...(c.pinnedTools ? { pinnedTools: c.pinnedTools } : {}),
      ...profileTokens(c.name, broker),
      tokenFile: tokens.fileOf(c.name),
    }));
}

/** The tokens of the tools a client's profile lets it see (its whole list in toolMode all). */
function profileTokens(client: string, broker: ControlledBroker): { toolTokens?: number } {
  const identity: Identity = { client, operator: false };
  const profile = broker.access.profileOf(identity);
  // Keyed by the profile object too: an edited profile is a new object in a new snapshot.
  const key = `${client}\0${profile ? JSON.stringify(profile) : ''}`;
  const toolTokens = broker.toolTokens.total(key, (route) =>
    broker.access.allowsTool(identity, route.server, route.exposed, profile),
  );
  return toolTokens === undefined ? {} : { toolTokens };
}
