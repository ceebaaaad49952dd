// Routes a session's prompts, resources and completions (everything but tools and tasks): where a
// name or URI resolves in the session's scope, the pins that hold a changed prompt, resource,
// template or MCP App page back, and the served server that answers. Apart from router.ts, whose
// concern is the tool call (profiles, guardrails, audit, result limits): these requests are not
// audited (the console re-reads the state resource on every change; completions come per keystroke).
import type { Catalog } from '../catalog/catalog';
import type { JsonObject, Prompt, Resource, ResourceTemplate } from '../shared/mcpTypes';
import type { RequestExtra, SessionContext } from './requestContext';
import { reviewCommand } from '../trust/pins';
import { getPinnedPrompt, promptNotListed } from './pinnedPrompts';
import { completesHeldTemplate, readPinnedResource, refuseHeldResource, resourceNotListed } from './pinnedResources';
import { isUiUri } from '../catalog/apps/appMeta';
import { contentsDigest, pageHeld, parsedResult, judgedRead, withAggregatedContents } from '../catalog/apps/appPages';
import { noCompletions, noSuchServer, servedCall, whenStarted, type ServedServer } from './servedServer';
import { AggregatedScope, type SessionScope } from './sessionScope';
import { merged } from '../shared/objects';

export interface ContentRoutesDeps {
  catalog: Catalog;
  servedServer(name: string): ServedServer | undefined;
  /** Applies a catalog rebuild that is pending (an upstream just came back), before a name misses. */
  settleCatalog(): void;
}

export class ContentRoutes {
  constructor(
    private readonly deps: ContentRoutesDeps,
    /** The session's scope (the router keeps one per session). */
    private readonly scopeOf: (ctx: SessionContext) => SessionScope,
  ) {}

  listPrompts(ctx: SessionContext): Prompt[] {
    this.deps.settleCatalog();
    return this.scopeOf(ctx).prompts();
  }

  async getPrompt(
    ctx: SessionContext,
    name: string,
    args: Record<string, string>,
    extra: RequestExtra,
  ): Promise<JsonObject> {
    const scope = this.scopeOf(ctx);
    const route = scope.resolvePrompt(name);
    if (!route) throw promptNotListed(this.deps.catalog, name, scope.server);
    const target = await whenStarted(this.target(route.server));
    return getPinnedPrompt(
      this.deps.catalog,
      () => this.deps.settleCatalog(),
      target,
      route.name,
      () => target.getPrompt(route.name, args, servedCall(ctx, extra)),
    );
  }

  listResources(ctx: SessionContext): Resource[] {
    this.deps.settleCatalog();
    return this.scopeOf(ctx).resources();
  }

  listResourceTemplates(ctx: SessionContext): ResourceTemplate[] {
    this.deps.settleCatalog();
    return this.scopeOf(ctx).resourceTemplates();
  }

  async readResource(ctx: SessionContext, uri: string, extra: RequestExtra): Promise<JsonObject> {
    const scope = this.scopeOf(ctx);
    const server = this.target(this.resourceOwner(ctx, uri));
    const own = scope.upstreamUri(uri);
    if (isUiUri(own) && server.kind === 'upstream') return this.readAppPage(ctx, scope, server, own, extra);
    const target = await whenStarted(server);
    return readPinnedResource(
      this.deps.catalog,
      () => this.deps.settleCatalog(),
      target,
      own,
      () => target.readResource(own, servedCall(ctx, extra)),
    );
  }

  /**
   * An MCP App's page: served only as pinned (the pins judged it when the server listed it, and
   * this read must bring the same bytes), under the endpoint's URI; the session's app calls then go
   * to this server (catalog/apps/appCalls.ts).
   */
  private async readAppPage(
    ctx: SessionContext,
    scope: SessionScope,
    server: ServedServer,
    uri: string,
    extra: RequestExtra,
  ): Promise<JsonObject> {
    const target = await whenStarted(server);
    this.deps.settleCatalog();
    const review = reviewCommand(server.name);
    if (this.deps.catalog.holds(server, uri)) throw pageHeld(server.name, uri, review, 'held');
    const entry = server.appPages?.find((page) => page.name === uri);
    if (!entry) throw pageHeld(server.name, uri, review, 'unknown');
    const result = parsedResult(await target.readResource(uri, servedCall(ctx, extra)));
    if (judgedRead(entry) !== contentsDigest(result)) {
      server.refreshAppPages?.();
      throw pageHeld(server.name, uri, review, 'changed');
    }
    if (!(scope instanceof AggregatedScope)) return result;
    scope.apps.opened(server.name);
    return withAggregatedContents(server.name, result);
  }

  async subscribe(ctx: SessionContext, uri: string): Promise<void> {
    const own = this.scopeOf(ctx).upstreamUri(uri);
    const target = await whenStarted(this.target(this.resourceOwner(ctx, uri)));
    refuseHeldResource(this.deps.catalog, () => this.deps.settleCatalog(), target, own);
    await target.subscribe(own);
  }

  async unsubscribe(ctx: SessionContext, uri: string): Promise<void> {
    const scope = this.scopeOf(ctx);
    const owner = scope.resolveResource(uri);
    const server = owner === undefined ? undefined : this.deps.servedServer(owner);
    await server?.unsubscribe(scope.upstreamUri(uri));
  }

  async complete(ctx: SessionContext, params: JsonObject, extra: RequestExtra): Promise<JsonObject> {
    const scope = this.scopeOf(ctx);
    const ref = params.ref as { type?: string; name?: string; uri?: string } | undefined;
    let owner = scope.server;
    const forwarded: JsonObject = { ...params };
    if (ref?.type === 'ref/prompt' && ref.name) {
      const route = scope.resolvePrompt(ref.name);
      owner = route?.server;
      if (route) forwarded.ref = merged(ref, { name: route.name });
    } else if (ref?.type === 'ref/resource' && ref.uri) {
      owner = scope.resolveResource(ref.uri);
    }
    const server = owner === undefined ? undefined : this.deps.servedServer(owner);
    if (!server) return noCompletions();
    // A prompt the pins hold back offers no completions either (its arguments are part of what changed).
    const prompt = ref?.type === 'ref/prompt' ? (forwarded.ref as { name?: string }).name : undefined;
    if (prompt !== undefined && this.deps.catalog.holds(server, prompt, 'prompts')) return noCompletions();
    if (completesHeldTemplate(this.deps.catalog, server, ref)) return noCompletions();
    return server.complete(forwarded, servedCall(ctx, extra));
  }

  private resourceOwner(ctx: SessionContext, uri: string): string {
    const owner = this.scopeOf(ctx).resolveResource(uri);
    if (owner === undefined) throw resourceNotListed(this.deps.catalog, uri);
    return owner;
  }

  private target(name: string): ServedServer {
    const server = this.deps.servedServer(name);
    if (!server) throw noSuchServer(name);
    return server;
  }
}
