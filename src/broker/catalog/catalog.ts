// The aggregated view of every served server: namespaced names, routes back to the owner, and
// lists built once per change (a tools/list is served from memory, never by asking upstreams).
// Rebuilding also decides what changed, per kind and per server, so list_changed goes out once.
// Over 450 lines, as one concern: the four kinds (tools, prompts, resources, templates) are built,
// held back by the pins and diffed in one pass, so a rebuild cannot see one kind newer than another.
import * as crypto from 'node:crypto';
import { filterByGlobs, NAMESPACE_SEPARATOR, RESERVED_NAME } from '../../registry/names';
import type { Prompt, Resource, ResourceTemplate, Tool } from '../shared/mcpTypes';
import { aggregatedUiUri, isAppOnly, withAggregatedPage } from './apps/appMeta';

/** The broker's own namespace: the registry refuses it as a name, and the catalog lists it first. */
export const FACADE_NAMESPACE = RESERVED_NAME;
export const SEPARATOR = NAMESPACE_SEPARATOR;
const MAX_NAME = 64;
const VALID = /^[A-Za-z0-9_-]+$/;

/**
 * `<server>__<name>`, made valid for strict clients (`[A-Za-z0-9_-]`, at most 64 characters).
 * A name that had to change gets a short hash of the original, so two originals never collide
 * and the same original always maps to the same name.
 */
export function namespacedName(server: string, name: string): string {
  const plain = `${server}${SEPARATOR}${name}`;
  if (plain.length <= MAX_NAME && VALID.test(name)) return plain;
  const hash = crypto.createHash('sha256').update(`${server}\0${name}`).digest('hex').slice(0, 8);
  const cleaned = name.replace(/[^A-Za-z0-9_-]/g, '_');
  const room = MAX_NAME - server.length - SEPARATOR.length - hash.length - 1;
  return `${server}${SEPARATOR}${cleaned.slice(0, Math.max(room, 0))}_${hash}`;
}

/**
 * What the catalog reads of a served server (routing/servedServer.ts extends it with the calls):
 * its name, whether its lists are served, the lists, and the definition's tool filter.
 */
export interface ListedServer {
  readonly name: string;
  /** `control` for the broker's own facade, `upstream` for a supervised server (only those are gated). */
  readonly kind: 'upstream' | 'control';
  readonly available: boolean;
  readonly tools: readonly Tool[];
  readonly prompts: readonly Prompt[];
  readonly resources: readonly Resource[];
  readonly resourceTemplates: readonly ResourceTemplate[];
  /** The definition's allowedTools / excludeTools (globs over the server's own tool names). */
  readonly toolFilter?: { allow?: readonly string[]; deny?: readonly string[] };
  /** Its MCP App pages as pin entries (apps/appPages.ts): judged by the gate with its tools. */
  readonly appPages?: readonly Tool[];
}

/** Where a listed name goes: the server, its own name there, and the name clients see. */
export interface Route {
  server: string;
  name: string;
  exposed: string;
  /** An MCP Apps tool only its app may call (`visibility: ["app"]`): not listed on the aggregated endpoint. */
  appOnly?: boolean;
}

/** The tools and app pages the gate judges together, one array per pair (the pins cache by it). */
const gateInputs = new WeakMap<readonly Tool[], { pages: readonly Tool[]; input: readonly Tool[] }>();
export function gateInput(source: Pick<ListedServer, 'tools' | 'appPages'>): readonly Tool[] {
  const pages = source.appPages;
  if (!pages?.length) return source.tools;
  const known = gateInputs.get(source.tools);
  if (known?.pages === pages) return known.input;
  const input = [...source.tools, ...pages];
  gateInputs.set(source.tools, { pages, input });
  return input;
}

/**
 * Turns an RFC 6570 template into a matcher good enough to route a URI to its server.
 * Not the SDK's UriTemplate, on purpose: its match() compiles a new RegExp on every call (measured
 * 94 µs against 2 µs to route over 20 templates, node 20), and it refuses a URI that leaves out
 * any `{?a,b}` query variable, while routing only has to find the owner and let it judge the URI.
 */
export function templateMatcher(template: string): RegExp {
  let source = '';
  let last = 0;
  for (const m of template.matchAll(/\{([+#./;?&]?)[^}]*\}/g)) {
    source += template.slice(last, m.index).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    source += m[1] === '+' || m[1] === '#' ? '.*' : m[1] === '?' || m[1] === '&' ? '(?:[?&].*)?' : '[^/]*';
    last = m.index! + m[0].length;
  }
  source += template.slice(last).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${source}$`);
}

type ListKind = 'tools' | 'prompts' | 'resources';
const LIST_KINDS: readonly ListKind[] = ['tools', 'prompts', 'resources'];

/** What a rebuild changed: per kind, the servers whose lists differ (empty: nothing changed). */
export type CatalogChanges = Record<ListKind, readonly string[]>;

/** One server's lists under its own names, for the per-server endpoint. */
export interface ServerView {
  readonly tools: Tool[];
  readonly prompts: Prompt[];
  readonly resources: Resource[];
  readonly resourceTemplates: ResourceTemplate[];
  /** The namespaced name of one of its tools (what a client's tool profile is written against). */
  exposedTool(name: string): string | undefined;
}

interface BuiltServer {
  view: ServerView;
  signatures: Record<ListKind, string>;
  /** The lists the gate judged at this build, and what it held back of them. */
  gated: readonly Tool[];
  gatedPrompts: readonly Prompt[];
  gatedResources: readonly Resource[];
  gatedTemplates: readonly ResourceTemplate[];
  held: HeldBack;
}

/** Content signatures of lists, kept per list object: an unchanged list costs nothing. */
const signatureCache = new WeakMap<object, string>();
function signature(...lists: readonly (readonly object[])[]): string {
  return lists
    .map((list) => {
      let sig = signatureCache.get(list);
      if (sig === undefined) {
        sig = list.length ? JSON.stringify(list) : '';
        signatureCache.set(list, sig);
      }
      return sig;
    })
    .join('\n');
}

const EMPTY_VIEW: ServerView = Object.freeze({
  tools: [],
  prompts: [],
  resources: [],
  resourceTemplates: [],
  exposedTool: () => undefined,
});
/** What the gate holds back of a server's lists: tool and prompt names, uriTemplates, resource URIs. */
export interface HeldBack {
  tools: ReadonlySet<string>;
  prompts: ReadonlySet<string>;
  resourceTemplates: ReadonlySet<string>;
  resources: ReadonlySet<string>;
}
/** What of a server's lists to hold back now (pins.ts: quarantined after a change). */
export type ToolGate = (
  server: string,
  tools: readonly Tool[],
  prompts: readonly Prompt[],
  resources: readonly Resource[],
  templates: readonly ResourceTemplate[],
) => HeldBack;
/** Why a resource read is refused: the server, and the held-back template that alone matched it (if that is why). */
export interface HeldResource {
  server: string;
  template?: string;
}
/** The instructions of a server to serve, given what it says now (pins.ts: undefined when held back). */
export type InstructionsGate = (server: string, instructions: string | undefined) => string | undefined;
const NOTHING_HELD: HeldBack = Object.freeze({
  tools: new Set<string>(),
  prompts: new Set<string>(),
  resourceTemplates: new Set<string>(),
  resources: new Set<string>(),
});

const NO_SIGNATURES: Record<ListKind, string> = {
  tools: signature([]),
  prompts: signature([]),
  resources: signature([], []),
};

export class Catalog {
  /** Bumped whenever a rebuild changed something clients can see. */
  version = 0;
  private tools: Tool[] = [];
  private toolRoutes = new Map<string, Route>();
  private prompts: Prompt[] = [];
  private promptRoutes = new Map<string, Route>();
  private resources: Resource[] = [];
  private resourceRoutes = new Map<string, string>();
  private templates: ResourceTemplate[] = [];
  private templateRoutes: { server: string; pattern: RegExp }[] = [];
  private servers = new Map<string, BuiltServer>();
  private gate?: ToolGate;
  private instructionsGate?: InstructionsGate;
  /** Tools held back by the gate, by the name they would be listed under: a call gets told why. */
  private heldRoutes = new Map<string, Route>();
  /** Prompts held back by the gate, the same way. */
  private heldPromptRoutes = new Map<string, Route>();
  /** Resources and templates held back, for the aggregated endpoint's reads of them (no owner resolves). */
  private heldResourceRoutes = new Map<string, HeldResource>();
  private heldTemplateRoutes: { server: string; uriTemplate: string; pattern: RegExp }[] = [];

  /** Installs the hook that holds back an upstream's tools (the control plane's pins). */
  setToolGate(gate: ToolGate, instructions?: InstructionsGate): void {
    this.gate = gate;
    this.instructionsGate = instructions;
  }

  /**
   * Whether the gate holds back `name` of `source` as it lists its tools now. A call is resolved
   * against the last build, which may predate the list a lazy start or list_changed just brought:
   * the router asks this again after the server is up, before the call goes on.
   */
  holds(source: ListedServer, name: string, kind: keyof HeldBack = 'tools'): boolean {
    return this.heldOf(source)?.[kind].has(name) ?? false;
  }

  private heldOf(source: ListedServer): HeldBack | undefined {
    if (source.kind !== 'upstream' || !this.gate) return undefined;
    const built = this.servers.get(source.name);
    const input = gateInput(source);
    const current =
      built &&
      built.gated === input &&
      built.gatedPrompts === source.prompts &&
      built.gatedResources === source.resources &&
      built.gatedTemplates === source.resourceTemplates;
    if (current) return built.held;
    return this.gate(source.name, input, source.prompts, source.resources, source.resourceTemplates);
  }

  /**
   * Why a read of `uri` from `source` is refused, if it is: the URI is a held-back resource, or no
   * listed resource has it and only held-back templates match it. Judged against the lists as they
   * are now (as holds()), so a read right after a list_changed is not judged by the last build.
   */
  heldResource(source: ListedServer, uri: string): HeldResource | undefined {
    const held = this.heldOf(source);
    if (!held || (!held.resources.size && !held.resourceTemplates.size)) return undefined;
    if (held.resources.has(uri)) return { server: source.name };
    if (source.resources.some((r) => r.uri === uri)) return undefined;
    let heldMatch: string | undefined;
    for (const t of source.resourceTemplates) {
      if (!templateMatcher(t.uriTemplate).test(uri)) continue;
      if (!held.resourceTemplates.has(t.uriTemplate)) return undefined;
      heldMatch ??= t.uriTemplate;
    }
    return heldMatch === undefined ? undefined : { server: source.name, template: heldMatch };
  }

  /** The instructions an upstream's clients are given: what it says, unless the gate holds them back. */
  instructionsOf(source: { name: string; kind: string; instructions?: string }): string | undefined {
    if (source.kind !== 'upstream' || !this.instructionsGate) return source.instructions;
    return this.instructionsGate(source.name, source.instructions);
  }

  /**
   * Rebuilds everything from the servers that are available, in the order given: a name taken by
   * an earlier server (the facade is given first) is never shadowed by a later one.
   */
  rebuild(served: readonly ListedServer[]): CatalogChanges {
    const tools: Tool[] = [];
    const toolRoutes = new Map<string, Route>();
    const prompts: Prompt[] = [];
    const promptRoutes = new Map<string, Route>();
    const resources: Resource[] = [];
    const resourceRoutes = new Map<string, string>();
    const templates: ResourceTemplate[] = [];
    const templateRoutes: { server: string; pattern: RegExp }[] = [];
    const servers = new Map<string, BuiltServer>();
    const heldRoutes = new Map<string, Route>();
    const heldPromptRoutes = new Map<string, Route>();
    const heldResourceRoutes = new Map<string, HeldResource>();
    const heldTemplateRoutes: { server: string; uriTemplate: string; pattern: RegExp }[] = [];

    for (const source of served) {
      const server = source.name;
      if (!source.available || servers.has(server)) continue;
      const own: Tool[] = [];
      const exposedOf = new Map<string, string>();
      const input = gateInput(source);
      const gated =
        (source.kind === 'upstream' &&
          this.gate?.(server, input, source.prompts, source.resources, source.resourceTemplates)) ||
        NOTHING_HELD;
      const held = gated.tools;
      for (const tool of source.tools) {
        if (!filterByGlobs(tool.name, source.toolFilter?.allow, source.toolFilter?.deny)) continue;
        const exposed = namespacedName(server, tool.name);
        if (held.has(tool.name)) {
          heldRoutes.set(exposed, { server, name: tool.name, exposed });
          continue;
        }
        // Namespacing already keeps servers apart; this keeps the first owner of a name if not.
        if (toolRoutes.has(exposed)) continue;
        own.push(tool);
        exposedOf.set(tool.name, exposed);
        // An app-only tool is routed (its page calls it) but never offered to a model here.
        const appOnly = isAppOnly(tool);
        toolRoutes.set(exposed, { server, name: tool.name, exposed, ...(appOnly ? { appOnly } : {}) });
        if (!appOnly) tools.push({ ...withAggregatedPage(server, tool), name: exposed });
      }
      const ownPrompts: Prompt[] = [];
      for (const prompt of source.prompts) {
        const exposed = namespacedName(server, prompt.name);
        if (gated.prompts.has(prompt.name)) {
          heldPromptRoutes.set(exposed, { server, name: prompt.name, exposed });
          continue;
        }
        if (promptRoutes.has(exposed)) continue;
        ownPrompts.push(prompt);
        promptRoutes.set(exposed, { server, name: prompt.name, exposed });
        prompts.push({ ...prompt, name: exposed });
      }
      const ownResources: Resource[] = [];
      for (const resource of source.resources) {
        if (gated.resources.has(resource.uri)) {
          heldResourceRoutes.set(resource.uri, { server });
          continue;
        }
        ownResources.push(resource);
        // URIs stay as the upstream wrote them (clients resolve them); the name carries the server.
        // An app's ui:// page is the exception: ui://<server>/… so two servers' pages never collide.
        const uri = aggregatedUiUri(server, resource.uri);
        if (resourceRoutes.has(uri)) continue;
        resourceRoutes.set(uri, server);
        resources.push({ ...resource, uri, name: namespacedName(server, resource.name) });
      }
      const ownTemplates: ResourceTemplate[] = [];
      for (const template of source.resourceTemplates) {
        if (gated.resourceTemplates.has(template.uriTemplate)) {
          const { uriTemplate } = template;
          heldTemplateRoutes.push({ server, uriTemplate, pattern: templateMatcher(uriTemplate) });
          continue;
        }
        ownTemplates.push(template);
        templates.push({ ...template, name: namespacedName(server, template.name) });
        templateRoutes.push({ server, pattern: templateMatcher(template.uriTemplate) });
      }
      const view: ServerView = {
        // The server's own list objects where nothing was filtered out (the endpoint caches by them).
        tools: own.length === source.tools.length ? (source.tools as Tool[]) : own,
        prompts: ownPrompts.length === source.prompts.length ? (source.prompts as Prompt[]) : ownPrompts,
        resources: ownResources.length === source.resources.length ? (source.resources as Resource[]) : ownResources,
        resourceTemplates:
          ownTemplates.length === source.resourceTemplates.length
            ? (source.resourceTemplates as ResourceTemplate[])
            : ownTemplates,
        exposedTool: (name) => exposedOf.get(name),
      };
      servers.set(server, {
        view,
        gated: input,
        gatedPrompts: source.prompts,
        gatedResources: source.resources,
        gatedTemplates: source.resourceTemplates,
        held: gated,
        signatures: {
          // The unfiltered list and the filter: a filtered list is a new array on every rebuild.
          tools: own.length
            ? `${signature(source.tools)}\0${JSON.stringify(source.toolFilter ?? {})}\0${[...held].join('\0')}`
            : NO_SIGNATURES.tools,
          // What is held back changes what clients see as much as the list does.
          prompts: source.prompts.length
            ? `${signature(source.prompts)}\0${[...gated.prompts].join('\0')}`
            : NO_SIGNATURES.prompts,
          resources: signature(view.resources, view.resourceTemplates),
        },
      });
    }

    const changes = this.compare(servers);
    this.servers = servers;
    this.heldRoutes = heldRoutes;
    this.heldPromptRoutes = heldPromptRoutes;
    this.heldResourceRoutes = heldResourceRoutes;
    this.heldTemplateRoutes = heldTemplateRoutes;
    // An unchanged kind keeps its list objects, so what the endpoint serialized for them stays valid.
    if (changes.tools.length) {
      this.tools = tools;
      this.toolRoutes = toolRoutes;
    }
    if (changes.prompts.length) {
      this.prompts = prompts;
      this.promptRoutes = promptRoutes;
    }
    if (changes.resources.length) {
      this.resources = resources;
      this.resourceRoutes = resourceRoutes;
      this.templates = templates;
      this.templateRoutes = templateRoutes;
    }
    if (LIST_KINDS.some((k) => changes[k].length)) this.version++;
    return changes;
  }

  private compare(next: Map<string, BuiltServer>): CatalogChanges {
    const changes: Record<ListKind, string[]> = { tools: [], prompts: [], resources: [] };
    const names = new Set([...this.servers.keys(), ...next.keys()]);
    for (const name of names) {
      for (const kind of LIST_KINDS) {
        const before = this.servers.get(name)?.signatures[kind] ?? NO_SIGNATURES[kind];
        if (before !== (next.get(name)?.signatures[kind] ?? NO_SIGNATURES[kind])) changes[kind].push(name);
      }
    }
    return changes;
  }

  /** Every tool under its namespaced name, the facade's first. */
  listTools(): Tool[] {
    return this.tools;
  }

  resolveTool(name: string): Route | undefined {
    return this.toolRoutes.get(name);
  }

  /** A tool the gate holds back, by its namespaced name, or by its own name on `server`'s endpoint. */
  heldTool(name: string, server?: string): Route | undefined {
    return this.heldRoutes.get(server === undefined ? name : namespacedName(server, name));
  }

  listPrompts(): Prompt[] {
    return this.prompts;
  }

  resolvePrompt(name: string): Route | undefined {
    return this.promptRoutes.get(name);
  }

  /** A prompt the gate holds back, by its namespaced name, or by its own name on `server`'s endpoint. */
  heldPrompt(name: string, server?: string): Route | undefined {
    return this.heldPromptRoutes.get(server === undefined ? name : namespacedName(server, name));
  }

  listResources(): Resource[] {
    return this.resources;
  }

  listResourceTemplates(): ResourceTemplate[] {
    return this.templates;
  }

  /** Why no server resolves `uri` on the aggregated endpoint, if the gate holds back what would have. */
  heldResourceRoute(uri: string): HeldResource | undefined {
    const held = this.heldResourceRoutes.get(uri);
    if (held) return held;
    const template = this.heldTemplateRoutes.find((t) => t.pattern.test(uri));
    return template && { server: template.server, template: template.uriTemplate };
  }

  /** The server that owns a URI: a listed resource first, else the first template that matches. */
  resolveResource(uri: string): string | undefined {
    return this.resourceRoutes.get(uri) ?? this.templateRoutes.find((t) => t.pattern.test(uri))?.server;
  }

  /** One server's lists under their own names (empty while it is not available). */
  server(name: string): ServerView {
    return this.servers.get(name)?.view ?? EMPTY_VIEW;
  }

  /** One server's tools after its allowed/excluded filter, under their own names. */
  toolsOf(server: string): Tool[] {
    return this.server(server).tools;
  }
}
