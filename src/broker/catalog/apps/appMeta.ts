// What the MCP Apps extension (io.modelcontextprotocol/ui) puts on tools and resources, read and
// rewritten here: a tool's page (`_meta.ui.resourceUri`, older servers `_meta["ui/resourceUri"]`),
// who may call it (`_meta.ui.visibility`), and the aggregated endpoint's ui:// namespacing.
import type { JsonObject, Tool } from '../../shared/mcpTypes';

/** The extension's id, as clients and servers declare it under `capabilities.extensions`. */
export const UI_EXTENSION = 'io.modelcontextprotocol/ui';
/** The MIME type of an app's page. */
export const APP_MIME_TYPE = 'text/html;profile=mcp-app';
/** Where servers written before `_meta.ui` put a tool's page. */
export const LEGACY_RESOURCE_URI_KEY = 'ui/resourceUri';
/** What the broker declares to upstreams: it hosts apps for callers that render them. */
export const UI_CLIENT_EXTENSION = { [UI_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } };

const UI_SCHEME = 'ui://';

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether a client's capabilities declare the MCP Apps extension. */
export function declaresUi(capabilities: JsonObject | undefined): boolean {
  const extensions = capabilities?.extensions;
  return isObject(extensions) && isObject(extensions[UI_EXTENSION]);
}

/** The ui:// page a tool opens, from either place servers put it. */
export function resourceUriOf(tool: Tool): string | undefined {
  const meta = tool._meta;
  if (!isObject(meta)) return undefined;
  const ui = meta.ui;
  const uri = isObject(ui) && typeof ui.resourceUri === 'string' ? ui.resourceUri : meta[LEGACY_RESOURCE_URI_KEY];
  return typeof uri === 'string' ? uri : undefined;
}

/**
 * Whether only the app may call a tool (`visibility: ["app"]`): the model is never offered it.
 * No visibility, or one that names `model`, is a tool for the model as before.
 */
export function isAppOnly(tool: Tool): boolean {
  const ui = isObject(tool._meta) ? tool._meta.ui : undefined;
  const visibility = isObject(ui) ? ui.visibility : undefined;
  return Array.isArray(visibility) && visibility.length > 0 && !visibility.includes('model');
}

export function isUiUri(uri: string): boolean {
  return uri.startsWith(UI_SCHEME);
}

/**
 * A server's ui:// URI on the aggregated endpoint: `ui://<server>/<the rest as the server wrote it>`.
 * Two servers' `ui://app/view.html` become `ui://a/app/view.html` and `ui://b/app/view.html`.
 */
export function aggregatedUiUri(server: string, uri: string): string {
  return isUiUri(uri) ? `${UI_SCHEME}${server}/${uri.slice(UI_SCHEME.length)}` : uri;
}

/** The server and its own URI of an aggregated ui:// URI; undefined for any other URI. */
export function splitAggregatedUiUri(uri: string): { server: string; uri: string } | undefined {
  if (!isUiUri(uri)) return undefined;
  const rest = uri.slice(UI_SCHEME.length);
  const slash = rest.indexOf('/');
  if (slash <= 0) return undefined;
  return { server: rest.slice(0, slash), uri: `${UI_SCHEME}${rest.slice(slash + 1)}` };
}

/** A tool whose page URI (in both places it may be written) is rewritten for the aggregated endpoint. */
export function withAggregatedPage(server: string, tool: Tool): Tool {
  const uri = resourceUriOf(tool);
  if (uri === undefined || !isUiUri(uri)) return tool;
  const meta = { ...(tool._meta as JsonObject) };
  if (isObject(meta.ui) && typeof meta.ui.resourceUri === 'string') {
    meta.ui = { ...meta.ui, resourceUri: aggregatedUiUri(server, meta.ui.resourceUri) };
  }
  const legacy = meta[LEGACY_RESOURCE_URI_KEY];
  if (typeof legacy === 'string') meta[LEGACY_RESOURCE_URI_KEY] = aggregatedUiUri(server, legacy);
  return { ...tool, _meta: meta };
}

/** One app of a server as the console shows it: its page, the tools that open it, what the page declares. */
export interface AppSummary {
  /** The page as the server names it. */
  uri: string;
  /** The page on the aggregated endpoint (ui://<server>/…). */
  aggregatedUri: string;
  title?: string;
  /** The server's tools that open it, by their own names; `appOnlyTools` those only the page may call. */
  tools: string[];
  appOnlyTools: string[];
  /** The page's declared `_meta.ui` (CSP, permissions), as listed. */
  ui?: JsonObject;
  /** Held back by the pins (the page changed since approval). */
  held: boolean;
}

/** The apps of a server: each ui:// page its resources list or its tools name. */
export function appsOf(
  server: string,
  tools: readonly Tool[],
  resources: readonly { uri: string; name?: string; title?: unknown; _meta?: unknown }[],
  held: (uri: string) => boolean,
): AppSummary[] {
  const apps = new Map<string, AppSummary>();
  const app = (uri: string): AppSummary => {
    let found = apps.get(uri);
    if (!found) {
      found = { uri, aggregatedUri: aggregatedUiUri(server, uri), tools: [], appOnlyTools: [], held: held(uri) };
      apps.set(uri, found);
    }
    return found;
  };
  for (const resource of resources) {
    if (!isUiUri(resource.uri)) continue;
    const summary = app(resource.uri);
    const title = typeof resource.title === 'string' ? resource.title : resource.name;
    if (title) summary.title = title;
    const ui = isObject(resource._meta) ? resource._meta.ui : undefined;
    if (isObject(ui)) summary.ui = ui;
  }
  for (const tool of tools) {
    const uri = resourceUriOf(tool);
    if (uri === undefined || !isUiUri(uri)) continue;
    const summary = app(uri);
    summary.tools.push(tool.name);
    if (isAppOnly(tool)) summary.appOnlyTools.push(tool.name);
  }
  return [...apps.values()].sort((a, b) => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0));
}
