// search_registry: what an agent (or the editor) finds in the configured MCP Registries. Only the
// registries the broker was configured with are asked, never an address the caller names, so the
// tool cannot be turned into a request to anywhere. With `name`, one server and the definition
// upsert_server would take for it; what an agent writes that way is a community server until the
// operator approves it, as any agent's upsert.
import { parseServerRef, registryRow } from '../../registry/registryApi';
import { serverJsonChoices, serverJsonToDefinition } from '../../registry/serverJson';
import { registryClients } from './registryClient/registries';
import { searchRegistries, type RegistryClient } from './registryClient/registryClient';
import { ErrorCodes, McpFailure } from '../shared/mcpTypes';
import type { ParamsOf, RegistrySearch } from './controlApi';

export async function searchRegistry(
  p: ParamsOf<'search_registry'>,
  given?: readonly RegistryClient[],
): Promise<RegistrySearch> {
  let clients: readonly RegistryClient[];
  try {
    clients = given ?? registryClients();
  } catch (err) {
    throw new McpFailure(ErrorCodes.Forbidden, (err as Error).message);
  }
  if (p.name === undefined) {
    try {
      return await searchRegistries(clients, { search: p.query, cursor: p.cursor, limit: p.limit });
    } catch (err) {
      throw new McpFailure(ErrorCodes.InvalidParams, (err as Error).message);
    }
  }
  let ref;
  try {
    ref = parseServerRef(p.name);
  } catch (err) {
    throw new McpFailure(ErrorCodes.InvalidParams, (err as Error).message);
  }
  const reasons: string[] = [];
  for (const client of clients) {
    let entry;
    try {
      entry = await client.server(ref.name, ref.version);
    } catch (err) {
      reasons.push((err as Error).message);
      continue;
    }
    const row = { ...registryRow(entry.server), registry: client.base };
    const ways = serverJsonChoices(entry.server);
    const picked = p.choice === undefined ? undefined : ways.find((w) => w.field === p.choice);
    if (p.choice !== undefined && !picked)
      throw new McpFailure(ErrorCodes.InvalidParams, `'choice' must be one of ${ways.map((w) => w.field).join(', ')}`);
    try {
      const made = serverJsonToDefinition(entry.server, picked ? { choice: picked } : {});
      return { servers: [row], problems: [], definition: made.definition, notes: made.notes };
    } catch (err) {
      return {
        servers: [row],
        problems: [],
        notes: [(err as Error).message],
        ...(ways.length > 1 ? { choices: ways.map((w) => `${w.field}: ${w.label}`) } : {}),
      };
    }
  }
  throw new McpFailure(ErrorCodes.InvalidParams, reasons.join('; '));
}
