// Where a session's names resolve, decided once per session: the aggregated endpoint sees the
// whole catalog under namespaced names; `/servers/<name>/mcp` sees one server under its own names.
import { filterByGlobs } from '../../registry/names';
import { FACADE_NAMESPACE, namespacedName, SEPARATOR, type Catalog, type Route } from '../catalog/catalog';
import {
  ErrorCodes,
  McpFailure,
  type Prompt,
  type Resource,
  type ResourceTemplate,
  type Tool,
} from '../shared/mcpTypes';
import type { ServedServer } from './servedServer';
import { SessionApps } from '../catalog/apps/appCalls';
import { splitAggregatedUiUri } from '../catalog/apps/appMeta';

export interface SessionScope {
  /** The one server a per-server session serves; undefined for the aggregated endpoint. */
  readonly server?: string;
  tools(): Tool[];
  /** The route of a tool this scope lists, by the name it lists it under. */
  resolveTool(name: string): Route | undefined;
  /** Why a tool name does not resolve, as the error the caller gets. */
  unknownTool(name: string): McpFailure;
  /** The server a tool name would belong to, and its namespaced name (what profiles judge). */
  toolOwner(name: string): { server: string; exposed: string } | undefined;
  prompts(): Prompt[];
  resolvePrompt(name: string): Route | undefined;
  resources(): Resource[];
  resourceTemplates(): ResourceTemplate[];
  /** The server that answers for a URI. */
  resolveResource(uri: string): string | undefined;
  /** The URI as its server wrote it (the aggregated endpoint's ui://<server>/… mapped back). */
  upstreamUri(uri: string): string;
}

/**
 * The tools a `toolMode: search` session has found with switchboard__find_tools: its tools/list
 * is the facade tools its scopes allow, the pinned ones and these (this session's only).
 */
export class FoundTools {
  private readonly names = new Set<string>();
  private narrowed?: { from: Tool[]; pinned: readonly string[]; scopes: readonly string[]; size: number; list: Tool[] };

  /** Adds names; returns how many were new (0: the session's list is unchanged). */
  add(names: readonly string[]): number {
    const before = this.names.size;
    for (const name of names) this.names.add(name);
    return this.names.size - before;
  }

  /**
   * `listed` (the session's profile-filtered list) cut down to the facade tools `facadeAllowed`
   * admits, the pinned tools and the found ones. `scopes` is only a cache key: the client's
   * mcp_allow, a new array whenever its definition changes.
   */
  narrow(
    listed: Tool[],
    pinned: readonly string[],
    scopes: readonly string[],
    facadeAllowed: (name: string) => boolean,
  ): Tool[] {
    const n = this.narrowed;
    if (n && n.from === listed && n.pinned === pinned && n.scopes === scopes && n.size === this.names.size) {
      return n.list;
    }
    const facade = `${FACADE_NAMESPACE}${SEPARATOR}`;
    const list = listed.filter((t) =>
      t.name.startsWith(facade)
        ? facadeAllowed(t.name)
        : this.names.has(t.name) || (pinned.length > 0 && filterByGlobs(t.name, pinned, undefined)),
    );
    this.narrowed = { from: listed, pinned, scopes, size: this.names.size, list };
    return list;
  }
}

export class AggregatedScope implements SessionScope {
  readonly server = undefined;
  /** What this session found, for toolMode search. */
  readonly found = new FoundTools();
  /** The servers whose app pages this session read: an app's unprefixed calls go to them. */
  readonly apps = new SessionApps();

  constructor(
    private readonly catalog: Catalog,
    private readonly servedServer: (name: string) => ServedServer | undefined,
  ) {}

  tools(): Tool[] {
    return this.catalog.listTools();
  }

  resolveTool(name: string): Route | undefined {
    return this.catalog.resolveTool(name);
  }

  toolOwner(name: string): { server: string; exposed: string } | undefined {
    const at = name.indexOf(SEPARATOR);
    return at > 0 ? { server: name.slice(0, at), exposed: name } : undefined;
  }

  unknownTool(name: string): McpFailure {
    // A restarting upstream's tools are out of the catalog for a moment: say it is restarting
    // (or failed, disabled...), not that its tool is unknown.
    const owner = this.servedServer(name.split(SEPARATOR, 1)[0]);
    if (owner && !owner.available) return owner.unavailable();
    const message = `Unknown tool '${name}'. List tools again: the catalog may have changed.`;
    return new McpFailure(ErrorCodes.InvalidParams, message);
  }

  prompts(): Prompt[] {
    return this.catalog.listPrompts();
  }

  resolvePrompt(name: string): Route | undefined {
    return this.catalog.resolvePrompt(name);
  }

  resources(): Resource[] {
    return this.catalog.listResources();
  }

  resourceTemplates(): ResourceTemplate[] {
    return this.catalog.listResourceTemplates();
  }

  resolveResource(uri: string): string | undefined {
    return this.catalog.resolveResource(uri);
  }

  upstreamUri(uri: string): string {
    const split = splitAggregatedUiUri(uri);
    return split && this.catalog.resolveResource(uri) === split.server ? split.uri : uri;
  }
}

/** One server, transparently: its own names in and out, everything else forwarded as it is. */
export class ServerScope implements SessionScope {
  constructor(
    private readonly catalog: Catalog,
    readonly server: string,
  ) {}

  tools(): Tool[] {
    return this.catalog.server(this.server).tools;
  }

  resolveTool(name: string): Route | undefined {
    const exposed = this.catalog.server(this.server).exposedTool(name);
    return exposed === undefined ? undefined : { server: this.server, name, exposed };
  }

  unknownTool(name: string): McpFailure {
    return new McpFailure(ErrorCodes.InvalidParams, `Unknown tool '${name}' on server '${this.server}'.`);
  }

  toolOwner(name: string): { server: string; exposed: string } {
    return { server: this.server, exposed: namespacedName(this.server, name) };
  }

  prompts(): Prompt[] {
    return this.catalog.server(this.server).prompts;
  }

  resolvePrompt(name: string): Route {
    // Prompts are not profiled; an unknown name is the upstream's to refuse.
    return { server: this.server, name, exposed: namespacedName(this.server, name) };
  }

  resources(): Resource[] {
    return this.catalog.server(this.server).resources;
  }

  resourceTemplates(): ResourceTemplate[] {
    return this.catalog.server(this.server).resourceTemplates;
  }

  resolveResource(): string {
    return this.server;
  }

  upstreamUri(uri: string): string {
    return uri;
  }
}
