// prompts/get of an upstream's prompt, held to its pins (trust/promptPins.ts): a prompt the pins
// hold back is refused naming the review; one the server does not list is not forwarded (it was
// never pinned); and an answer whose description is not the listed (pinned) one is not passed on,
// so a server cannot show one text in prompts/list and give the model another in prompts/get.
import type { Catalog } from '../catalog/catalog';
import { parsedResult } from '../catalog/apps/appPages';
import { ErrorCodes, McpFailure, type JsonObject } from '../shared/mcpTypes';
import { reviewCommand } from '../trust/pins';
import { promptQuarantined } from '../trust/promptPins';
import type { ServedServer } from './servedServer';

export async function getPinnedPrompt(
  catalog: Catalog,
  settleCatalog: () => void,
  server: ServedServer,
  name: string,
  get: () => Promise<JsonObject>,
): Promise<JsonObject> {
  if (server.kind !== 'upstream') return get();
  // The name was resolved against the last build; a list_changed may have brought a list since.
  settleCatalog();
  const review = reviewCommand(server.name);
  if (catalog.holds(server, name, 'prompts')) throw promptQuarantined(server.name, name, review);
  const listed = server.prompts.find((p) => p.name === name);
  if (!listed) throw new McpFailure(ErrorCodes.InvalidParams, `Unknown prompt '${name}' on server '${server.name}'.`);
  const result = await get();
  const said = parsedResult(result).description;
  // No description (absent or null, as some SDKs write it) gives the model no text of its own.
  if (said !== undefined && said !== null && said !== listed.description) {
    throw new McpFailure(
      ErrorCodes.Forbidden,
      `Prompt '${name}' of server '${server.name}' answered with a description that is not the one it lists ` +
        `(and that was pinned at approval), so the answer is not passed on. If the server changed the prompt, ` +
        `the operator must review the change: ${review}.`,
    );
  }
  return result;
}

/** Why a prompt name does not resolve on the aggregated endpoint: held back by the pins, or unknown. */
export function promptNotListed(catalog: Catalog, name: string, server?: string): McpFailure {
  const held = catalog.heldPrompt(name, server);
  if (held) return promptQuarantined(held.server, held.name, reviewCommand(held.server));
  return new McpFailure(ErrorCodes.InvalidParams, `Unknown prompt '${name}'.`);
}
