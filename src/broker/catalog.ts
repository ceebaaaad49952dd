// The aggregated view of every running upstream: namespaced names, routes back to the owner, and
// lists built once per change (a tools/list is served from memory, never by asking upstreams).
import * as crypto from 'node:crypto';
import { filterByGlobs } from '../registry/names';
import type { Prompt, Resource, ResourceTemplate, Tool } from './mcpTypes';
import type { Upstream } from './upstream';

export const FACADE_NAMESPACE = 'switchboard';
export const SEPARATOR = '__';
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

export type ToolRoute = { server: string; name: string };

export interface FacadeCatalog {
  tools(): Tool[];
  prompts(): Prompt[];
}

interface TemplateRoute {
  server: string;
  pattern: RegExp;
}

/** Turns an RFC 6570 template into a matcher good enough to route a URI to its server. */
function templateMatcher(template: string): RegExp {
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

export class Catalog {
  version = 0;
  private tools: Tool[] = [];
  private toolRoutes = new Map<string, ToolRoute>();
  private prompts: Prompt[] = [];
  private promptRoutes = new Map<string, ToolRoute>();
  private resources: Resource[] = [];
  private resourceRoutes = new Map<string, string>();
  private templates: ResourceTemplate[] = [];
  private templateRoutes: TemplateRoute[] = [];
  private filtered = new Map<string, Tool[]>();
  private serverTools = new Map<string, Tool[]>();
  /** Facade names, which a client's tool profile never hides. */
  private facadeToolNames = new Set<string>();

  constructor(private readonly facade?: FacadeCatalog) {}

  /** Rebuilds everything from the running upstreams. Cheap enough to do on every change. */
  rebuild(upstreams: readonly Upstream[]): void {
    const tools: Tool[] = [];
    const toolRoutes = new Map<string, ToolRoute>();
    const prompts: Prompt[] = [];
    const promptRoutes = new Map<string, ToolRoute>();
    const resources: Resource[] = [];
    const resourceRoutes = new Map<string, string>();
    const templates: ResourceTemplate[] = [];
    const templateRoutes: TemplateRoute[] = [];
    const serverTools = new Map<string, Tool[]>();

    for (const facadeTool of this.facade?.tools() ?? []) {
      tools.push(facadeTool);
      toolRoutes.set(facadeTool.name, { server: FACADE_NAMESPACE, name: facadeTool.name });
    }
    for (const facadePrompt of this.facade?.prompts() ?? []) {
      prompts.push(facadePrompt);
      promptRoutes.set(facadePrompt.name, { server: FACADE_NAMESPACE, name: facadePrompt.name });
    }
    this.facadeToolNames = new Set(toolRoutes.keys());

    for (const upstream of upstreams) {
      if (upstream.state !== 'running') continue;
      const server = upstream.name;
      const { allowedTools, excludeTools } = upstream.def;
      const own: Tool[] = [];
      for (const tool of upstream.tools) {
        if (!filterByGlobs(tool.name, allowedTools, excludeTools)) continue;
        own.push(tool);
        const exposed = namespacedName(server, tool.name);
        // A facade name can never be taken: namespacing already prevents it; this guards the map.
        if (toolRoutes.has(exposed)) continue;
        toolRoutes.set(exposed, { server, name: tool.name });
        tools.push({ ...tool, name: exposed, ...(tool.title === undefined ? {} : { title: tool.title }) });
      }
      serverTools.set(server, own);
      for (const prompt of upstream.prompts) {
        const exposed = namespacedName(server, prompt.name);
        if (promptRoutes.has(exposed)) continue;
        promptRoutes.set(exposed, { server, name: prompt.name });
        prompts.push({ ...prompt, name: exposed });
      }
      for (const resource of upstream.resources) {
        // URIs stay as the upstream wrote them (clients resolve them); the name carries the server.
        if (resourceRoutes.has(resource.uri)) continue;
        resourceRoutes.set(resource.uri, server);
        resources.push({ ...resource, name: namespacedName(server, resource.name) });
      }
      for (const template of upstream.resourceTemplates) {
        templates.push({ ...template, name: namespacedName(server, template.name) });
        templateRoutes.push({ server, pattern: templateMatcher(template.uriTemplate) });
      }
    }

    this.tools = tools;
    this.toolRoutes = toolRoutes;
    this.prompts = prompts;
    this.promptRoutes = promptRoutes;
    this.resources = resources;
    this.resourceRoutes = resourceRoutes;
    this.templates = templates;
    this.templateRoutes = templateRoutes;
    this.serverTools = serverTools;
    this.filtered.clear();
    this.version++;
  }

  /** The aggregated tool list, optionally narrowed by a client's allow/deny profile (cached). */
  listTools(profile?: { allow?: string[]; deny?: string[] }): Tool[] {
    if (!profile || (!profile.allow?.length && !profile.deny?.length)) return this.tools;
    const key = JSON.stringify(profile);
    let list = this.filtered.get(key);
    if (!list) {
      list = this.tools.filter((t) => this.facadeToolNames.has(t.name) || filterByGlobs(t.name, profile.allow, profile.deny));
      this.filtered.set(key, list);
    }
    return list;
  }

  resolveTool(name: string): ToolRoute | undefined {
    return this.toolRoutes.get(name);
  }

  isFacadeTool(name: string): boolean {
    return this.facadeToolNames.has(name);
  }

  listPrompts(): Prompt[] {
    return this.prompts;
  }

  resolvePrompt(name: string): ToolRoute | undefined {
    return this.promptRoutes.get(name);
  }

  listResources(): Resource[] {
    return this.resources;
  }

  listResourceTemplates(): ResourceTemplate[] {
    return this.templates;
  }

  /** The server that owns a URI: a listed resource first, else the first template that matches. */
  resolveResource(uri: string): string | undefined {
    return this.resourceRoutes.get(uri) ?? this.templateRoutes.find((t) => t.pattern.test(uri))?.server;
  }

  /** One server's tools after its allowed/excluded filter, under their own names. */
  toolsOf(server: string): Tool[] {
    return this.serverTools.get(server) ?? [];
  }
}
