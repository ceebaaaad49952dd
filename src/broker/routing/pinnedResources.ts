// resources/read, resources/subscribe and completions of an upstream's resources, held to their pins
// (trust/resourcePins.ts): a resource whose pinned metadata changed is refused naming the review,
// and so is a URI that no listed resource has and only held-back templates match; a held-back
// template offers no completions (its description is part of what changed). A URI the server
// neither lists nor templates goes on as before: the set of resources is not pinned.
import type { Catalog } from '../catalog/catalog';
import { McpFailure, type JsonObject } from '../shared/mcpTypes';
import { reviewCommand } from '../trust/pins';
import { resourceQuarantined } from '../trust/resourcePins';
import type { ServedServer } from './servedServer';

/**
 * Throws the quarantine error when the pins hold `uri` (the server's own URI) back. A read and a
 * subscribe are refused alike: a subscription to a held resource would only bring updates of
 * something the session may not read.
 */
export function refuseHeldResource(
  catalog: Catalog,
  settleCatalog: () => void,
  server: ServedServer,
  uri: string,
): void {
  if (server.kind !== 'upstream') return;
  // The URI was resolved against the last build; a list_changed may have brought a list since.
  settleCatalog();
  const held = catalog.heldResource(server, uri);
  if (held) throw resourceQuarantined(server.name, uri, reviewCommand(server.name), held.template);
}

/** Reads `uri` (the server's own URI) unless the pins hold it back; `read` forwards it. */
export function readPinnedResource(
  catalog: Catalog,
  settleCatalog: () => void,
  server: ServedServer,
  uri: string,
  read: () => Promise<JsonObject>,
): Promise<JsonObject> {
  refuseHeldResource(catalog, settleCatalog, server, uri);
  return read();
}

/** Why no server resolves `uri` on the aggregated endpoint: held back by the pins, or not offered. */
export function resourceNotListed(catalog: Catalog, uri: string): McpFailure {
  const held = catalog.heldResourceRoute(uri);
  if (held) return resourceQuarantined(held.server, uri, reviewCommand(held.server), held.template);
  return new McpFailure(-32002, `Resource not found: no server offers ${uri}`);
}

/** Whether a completion of `ref` (a ref/resource naming a uriTemplate) is for a held-back template. */
export function completesHeldTemplate(
  catalog: Catalog,
  server: ServedServer,
  ref: { type?: string; uri?: string } | undefined,
): boolean {
  return (
    ref?.type === 'ref/resource' && typeof ref.uri === 'string' && catalog.holds(server, ref.uri, 'resourceTemplates')
  );
}
