// An app's page as the pins see it: each ui:// resource a server lists is read when its lists are
// loaded and stands in its pin as one entry named by its URI, binding the page's bytes (as a
// digest) and what it declares it may load or use (`_meta.ui`: CSP, permissions, domain). The pins
// then hold a swapped page like a changed tool, and Review Tool Changes shows it (trust/pins.ts).
import { rememberedJson } from '../../shared/rawJson';
import { ErrorCodes, McpFailure, type JsonObject, type Resource, type Tool } from '../../shared/mcpTypes';
import { canonicalJson, sha256 } from '../../trust/toolDigest';
import { aggregatedUiUri, isUiUri, resourceUriOf } from './appMeta';

/** Where a page entry keeps what is pinned of the page. */
export const PAGE_META_KEY = 'switchboard/appPage';

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A result as an object, also when it was forwarded as the upstream's bytes. */
export function parsedResult(result: JsonObject): JsonObject {
  const raw = rememberedJson(result);
  return raw === undefined ? result : (JSON.parse(raw.toString()) as JsonObject);
}

/** The digest of a read as a whole: every content item (text or blob, MIME type, its `_meta`). */
export function contentsDigest(result: JsonObject): string {
  const contents = Array.isArray(result.contents) ? result.contents : [];
  return sha256(canonicalJson(contents));
}

/** The digest of a page's bytes alone (each item's text or blob), so a review tells them from its `_meta`. */
function bodyDigest(contents: readonly JsonObject[]): string {
  return sha256(canonicalJson(contents.map((c) => c.text ?? c.blob ?? null)));
}

/** The resources of a list that are app pages (ui:// URIs). */
export function pageResources(resources: readonly Resource[]): Resource[] {
  return resources.filter((r) => isUiUri(r.uri));
}

/** The entry that stands for one page in a pin: its URI, its content digest and declared `_meta.ui`. */
export function pageEntry(resource: Resource, read: JsonObject): Tool {
  const contents = Array.isArray(read.contents) ? (read.contents as JsonObject[]) : [];
  const first = contents.find((c) => c.uri === resource.uri) ?? contents[0];
  const contentUi = isObject(first?._meta) ? first._meta.ui : undefined;
  const listedUi = isObject(resource._meta) ? resource._meta.ui : undefined;
  const page: JsonObject = {
    mimeType: first?.mimeType ?? resource.mimeType ?? null,
    content: bodyDigest(contents),
    // What the host enforces: the content item's `_meta.ui` wins over the listed one (both pinned).
    ui: contentUi ?? listedUi ?? null,
    ...(listedUi !== undefined && contentUi !== undefined ? { listedUi } : {}),
    // What a later read must bring exactly (apps are served only as judged: router.ts).
    read: contentsDigest(read),
  };
  return {
    name: resource.uri,
    description: 'MCP App page: its HTML and what it declares it may load are pinned.',
    inputSchema: { type: 'object' },
    _meta: { [PAGE_META_KEY]: page },
  };
}

/** A page that could not be read when the lists were loaded: pinned as unreadable, so a later page is a change. */
export function unreadablePage(resource: Resource): Tool {
  return {
    name: resource.uri,
    description: 'MCP App page (could not be read when the server listed it).',
    inputSchema: { type: 'object' },
    _meta: { [PAGE_META_KEY]: { unreadable: true } },
  };
}

/** The digest of the read a page entry was made from. */
export function judgedRead(entry: Tool | undefined): string | undefined {
  const page = isObject(entry?._meta) ? entry._meta[PAGE_META_KEY] : undefined;
  return isObject(page) && typeof page.read === 'string' ? page.read : undefined;
}

/** Why a read of a page is refused: held back by the pins, changed since it was judged, or never judged. */
export type PageRefusal = 'held' | 'changed' | 'unknown';

/** The error a read of a page that is held back, changed since it was judged, or unknown to the pins gets. */
export function pageHeld(server: string, uri: string, review: string, why: PageRefusal): McpFailure {
  if (why === 'unknown') {
    return new McpFailure(
      ErrorCodes.Forbidden,
      `App page '${uri}' of server '${server}' is not served: the server neither lists it nor names it in a ` +
        `tool, so it was not pinned with the server's tools.`,
    );
  }
  const reason =
    why === 'changed'
      ? 'its content is not what the broker read when the server listed it (the page changed); the broker reads it again'
      : 'it is not the page pinned when the server was approved (it changed or it is new)';
  return new McpFailure(
    ErrorCodes.Forbidden,
    `App page '${uri}' of server '${server}' is held back: ${reason}. The operator must review the change: ${review}.`,
  );
}

/** A read result whose content URIs are the aggregated endpoint's (`ui://<server>/…`). */
export function withAggregatedContents(server: string, result: JsonObject): JsonObject {
  if (!Array.isArray(result.contents)) return result;
  const contents = (result.contents as JsonObject[]).map((c) =>
    typeof c.uri === 'string' ? { ...c, uri: aggregatedUiUri(server, c.uri) } : c,
  );
  return { ...result, contents };
}

/**
 * The page entries of a server: every ui:// resource it lists and every page its tools name, each
 * read once now (a page that cannot be read is pinned as unreadable, so a page that comes later is
 * a change). `read` asks the server for one URI.
 */
export async function readAppPages(
  tools: readonly Tool[],
  resources: readonly Resource[],
  read: (uri: string) => Promise<JsonObject>,
): Promise<Tool[]> {
  const pages = new Map<string, Resource>();
  for (const resource of pageResources(resources)) if (!pages.has(resource.uri)) pages.set(resource.uri, resource);
  for (const tool of tools) {
    const uri = resourceUriOf(tool);
    if (uri !== undefined && isUiUri(uri) && !pages.has(uri)) pages.set(uri, { uri, name: uri });
  }
  const entries = await Promise.all(
    [...pages.values()].map((resource) =>
      read(resource.uri).then(
        (result) => pageEntry(resource, parsedResult(result)),
        () => unreadablePage(resource),
      ),
    ),
  );
  return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
